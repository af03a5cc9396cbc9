import { SandboxId } from "@prbox/domain"
import { randomBytesUnsafe } from "effect/crypto/SecureRandom"
import * as Base64Url from "effect/encoding/Base64Url"

/** A new sandbox's id: 12 characters of the platform's CSPRNG. */
export const newSandboxId = (): SandboxId => {
  const alphabet = "0123456789abcdefghijklmnopqrstuv"
  return SandboxId.make(Array.from(randomBytesUnsafe(12), (byte) => alphabet[byte % 32]).join(""))
}

/** 24 bytes from the platform's CSPRNG (`globalThis.crypto`), base64url: 32 characters, no padding. */
export const newPassword = (): string => Base64Url.encode(randomBytesUnsafe(24))

import * as Crypto from "node:crypto"

/** The least cost argon2id allows (RFC 9106: memory ≥ 8 KiB per lane). */
const COST = { memory: 8, passes: 1, parallelism: 1 } as const

const unpadded = (bytes: Buffer): string => bytes.toString("base64").replace(/=+$/, "")

/**
 * How prbox's code-server is given a sandbox's password: as an argon2id hash
 * in `HASHED_PASSWORD`. Given `PASSWORD`, code-server hashes it at every
 * login and verifies that hash at every authenticated request (the page, its
 * websockets, proxied ports), each about 130 ms of CPU at argon2's default
 * cost; given a hash, a login is one verify and a session is a comparison.
 * The least cost is enough: the password is 24 random bytes (SandboxIds.ts),
 * which no guess reaches however cheap a try, and the hash is itself the
 * session cookie, as secret as the password it replaces. The salt is the
 * sandbox's id, hashed, so the same row always gives the same container
 * spec. A Node without `crypto.argon2Sync` (before 24.7) passes the password.
 */
export const codeServerPasswordEnv = (password: string, sandboxId: string): Readonly<Record<string, string>> => {
  if (typeof Crypto.argon2Sync !== "function") return { PASSWORD: password }
  const nonce = Crypto.createHash("sha256").update(`prbox code-server salt ${sandboxId}`).digest().subarray(0, 16)
  const tag = Crypto.argon2Sync("argon2id", { message: password, nonce, tagLength: 32, ...COST })
  const { memory, passes, parallelism } = COST
  return {
    HASHED_PASSWORD: `$argon2id$v=19$m=${memory},t=${passes},p=${parallelism}$${unpadded(nonce)}$${unpadded(tag)}`
  }
}

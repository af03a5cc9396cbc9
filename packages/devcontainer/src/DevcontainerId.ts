// `${devcontainerId}` as the devcontainers CLI makes it (`devcontainerIdForLabels`,
// src/spec-common/variableSubstitution.ts): the SHA-256 of the container's id
// labels as sorted JSON, written in base 32 and padded to 52 characters. The
// hashing is the caller's (this package does no I/O and has no crypto).

/** What is hashed: the id labels as JSON, keys sorted. */
export const devcontainerIdInput = (labels: Readonly<Record<string, string>>): string =>
  JSON.stringify(labels, Object.keys(labels).sort())

/** The id from the input's SHA-256 digest: 52 characters of 0-9a-v. */
export const devcontainerIdFromDigest = (digest: Uint8Array): string => {
  const hex = Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("")
  return BigInt(`0x${hex}`).toString(32).padStart(52, "0")
}

import { createHash, createHmac } from "node:crypto"

/**
 * OpenSSH's known_hosts, read the way `ssh` reads it: plain and hashed
 * (`|1|salt|hash`) host patterns, `[host]:port` for a port other than 22,
 * `*`/`?` wildcards and `!` negations, `@revoked` keys. Only the decision
 * lives here; SshTransport acts on it.
 */

/** A host key as the server sent it: its type (`ssh-ed25519`) and wire blob. */
export interface HostKey {
  readonly type: string
  readonly blob: Buffer
}

export type HostKeyVerdict =
  | { readonly _tag: "Trusted" }
  /** No entry for the host. */
  | { readonly _tag: "Unknown" }
  /**
   * Entries for the host, none with this key; or the key is `@revoked`. The
   * server is asked for a known type first, so another type is a change too.
   */
  | { readonly _tag: "Changed"; readonly revoked: boolean }

interface Entry {
  readonly marker: "revoked" | "cert-authority" | undefined
  readonly patterns: string
  readonly type: string
  readonly key: string
}

/** The name known_hosts files a host under: `host`, or `[host]:port` when the port is not 22. */
export const hostName = (host: string, port: number): string => (port === 22 ? host : `[${host}]:${port}`)

/** `SHA256:…`, what `ssh-keygen -lf` and `ssh` print. */
export const fingerprint = (blob: Buffer): string =>
  `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`

/** The key type a wire blob names (its first string). */
export const keyType = (blob: Buffer): string => {
  if (blob.length < 4) return ""
  const length = blob.readUInt32BE(0)
  return blob.subarray(4, 4 + length).toString("latin1")
}

const parse = (text: string): Array<Entry> =>
  text.split("\n").flatMap((raw) => {
    const line = raw.trim()
    if (line.length === 0 || line.startsWith("#")) return []
    const words = line.split(/\s+/)
    const marker = words[0] === "@revoked" ? "revoked" : words[0] === "@cert-authority" ? "cert-authority" : undefined
    const [patterns, type, key] = marker === undefined ? words : words.slice(1)
    return patterns === undefined || type === undefined || key === undefined ? [] : [{ marker, patterns, type, key }]
  })

const wildcard = (pattern: string, name: string): boolean => {
  const regex = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".")
  return new RegExp(`^${regex}$`, "i").test(name)
}

const hashedMatch = (pattern: string, name: string): boolean => {
  const [, kind, salt, hash] = pattern.split("|")
  if (kind !== "1" || salt === undefined || hash === undefined) return false
  return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash
}

/** Whether an entry's host field names `name`: a negated match excludes it whatever else matches. */
const namesHost = (patterns: string, name: string): boolean => {
  if (patterns.startsWith("|")) return hashedMatch(patterns, name)
  let matched = false
  for (const pattern of patterns.split(",")) {
    if (pattern.startsWith("!")) {
      if (wildcard(pattern.slice(1), name)) return false
    } else if (wildcard(pattern, name)) matched = true
  }
  return matched
}

/** Decides whether `key`, presented by `host:port`, is the key known_hosts records for it. */
export const verifyHostKey = (text: string, host: string, port: number, key: HostKey): HostKeyVerdict => {
  const name = hostName(host, port)
  const entries = parse(text).filter((entry) => entry.marker !== "cert-authority" && namesHost(entry.patterns, name))
  const presented = key.blob.toString("base64")
  if (entries.some((entry) => entry.marker === "revoked" && entry.key === presented)) {
    return { _tag: "Changed", revoked: true }
  }
  const keys = entries.filter((entry) => entry.marker === undefined)
  if (keys.some((entry) => entry.type === key.type && entry.key === presented)) return { _tag: "Trusted" }
  return keys.length > 0 ? { _tag: "Changed", revoked: false } : { _tag: "Unknown" }
}

/** The key types known_hosts has for `host:port`, in file order: the server is asked for one of these first. */
export const knownKeyTypes = (text: string, host: string, port: number): Array<string> => {
  const name = hostName(host, port)
  const types = parse(text)
    .filter((entry) => entry.marker === undefined && namesHost(entry.patterns, name))
    .map((entry) => entry.type)
  return [...new Set(types)]
}

/**
 * A registry's `WWW-Authenticate` answer to an anonymous request (RFC 7235,
 * as the distribution token spec uses it). Pure.
 */

export type Challenge =
  | {
      readonly _tag: "Bearer"
      /** Where a token is asked for. */
      readonly realm: string
      readonly service: string | undefined
      readonly scope: string | undefined
    }
  | { readonly _tag: "Basic" }

// One `key=value` or `key="quoted value"` parameter (a quoted value may hold escaped quotes and commas).
const parameter = /\s*([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))\s*(?:,|$)/y

const parameters = (text: string): ReadonlyMap<string, string> | undefined => {
  const found = new Map<string, string>()
  parameter.lastIndex = 0
  while (parameter.lastIndex < text.length) {
    const start = parameter.lastIndex
    const match = parameter.exec(text)
    if (match === null || parameter.lastIndex === start) return undefined
    const [, key = "", quoted, bare] = match
    found.set(key.toLowerCase(), quoted === undefined ? (bare ?? "") : quoted.replace(/\\(.)/g, "$1"))
  }
  return found
}

/**
 * The challenge a header states, or undefined when it states none that we
 * answer (another scheme, a Bearer challenge without a realm, a header that
 * does not parse). The scheme is case-insensitive.
 */
export const parseChallenge = (header: string | null | undefined): Challenge | undefined => {
  if (header === null || header === undefined) return undefined
  const trimmed = header.trim()
  const space = trimmed.search(/\s/)
  const scheme = (space === -1 ? trimmed : trimmed.slice(0, space)).toLowerCase()
  const rest = space === -1 ? "" : trimmed.slice(space + 1)
  if (scheme === "basic") return { _tag: "Basic" }
  if (scheme !== "bearer") return undefined
  const parsed = parameters(rest)
  const realm = parsed?.get("realm")
  if (parsed === undefined || realm === undefined || realm.length === 0) return undefined
  return { _tag: "Bearer", realm, service: parsed.get("service"), scope: parsed.get("scope") }
}

// The shared shapes of the Compose check: what one key of a service (or of a
// top-level network, volume, secret) comes to, for an untrusted and for a
// trusted repository, and the rendered configuration's path forms.

/** The key is not written into the cleaned project. */
export const DROP: unique symbol = Symbol("drop")
export type Kept = unknown

/** A setting that widens, with what it does (`property`: `services.<name>.<key>[…]`). */
export interface Finding {
  readonly property: string
  readonly detail: string
}

/** What one key comes to. */
export interface KeyResult {
  /** The value an untrusted repository gets (`DROP`: none). */
  readonly untrusted: Kept
  /** The value a trusted repository gets. */
  readonly trusted: Kept
  /** What the untrusted value leaves out. */
  readonly widening: ReadonlyArray<Finding>
  /** Set when no repository can have the key: the project is refused. */
  readonly refusal?: Finding
  /** Said to every repository, one log line each. */
  readonly notes: ReadonlyArray<string>
}

export const keep = (value: unknown): KeyResult => ({ untrusted: value, trusted: value, widening: [], notes: [] })

/** Left out for an untrusted repository (`instead`: what it gets), kept for a trusted one. */
export const widen = (property: string, detail: string, value: unknown, instead: Kept = DROP): KeyResult => ({
  untrusted: instead,
  trusted: value,
  widening: [{ property, detail }],
  notes: []
})

/** Not written for any repository, with why. */
export const dropped = (note: string): KeyResult => ({ untrusted: DROP, trusted: DROP, widening: [], notes: [note] })

export const refused = (property: string, detail: string): KeyResult => ({
  untrusted: DROP,
  trusted: DROP,
  widening: [],
  refusal: { property, detail },
  notes: []
})

/** The results of a list's entries as one list result (an entry `DROP`ped is left out of its list). */
export const combineList = (results: ReadonlyArray<KeyResult>, notes: ReadonlyArray<string> = []): KeyResult => {
  const refusal = results.find((result) => result.refusal !== undefined)?.refusal
  return {
    untrusted: results.map((result) => result.untrusted).filter((value) => value !== DROP),
    trusted: results.map((result) => result.trusted).filter((value) => value !== DROP),
    widening: results.flatMap((result) => result.widening),
    ...(refusal === undefined ? {} : { refusal }),
    notes: [...notes, ...results.flatMap((result) => result.notes)]
  }
}

export const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A scalar as text (Compose renders numbers and booleans unquoted); undefined for anything else. */
export const scalarText = (value: unknown): string | undefined =>
  typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean"
      ? String(value)
      : undefined

/**
 * A host path of the rendered configuration (absolute: Compose resolves them)
 * as a repository-relative one ("." for the root); undefined when it is
 * relative, holds "..", or is outside `root`.
 */
export const inRepository = (root: string, path: string): string | undefined => {
  if (!path.startsWith("/") || !root.startsWith("/")) return undefined
  const parts = path.split("/").filter((part) => part !== "" && part !== ".")
  if (parts.includes("..")) return undefined
  const rootParts = root.split("/").filter((part) => part !== "" && part !== ".")
  if (rootParts.includes("..") || parts.length < rootParts.length) return undefined
  if (!rootParts.every((part, index) => parts[index] === part)) return undefined
  const rest = parts.slice(rootParts.length)
  return rest.length === 0 ? "." : rest.join("/")
}

/** `service:<name>` / `container:<name>` forms of network_mode, pid and ipc. */
export const sharedWith = (
  value: string
): { readonly kind: "service" | "container"; readonly name: string } | undefined => {
  const match = /^(service|container):(.+)$/.exec(value)
  return match === null ? undefined : { kind: match[1] as "service" | "container", name: match[2] ?? "" }
}

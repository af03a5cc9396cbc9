// Compose's variable interpolation (`${NAME}`, `${NAME:-default}`,
// `${NAME-default}`, `${NAME:?error}`, `${NAME:+value}`, `$NAME`, `$$`) from
// an empty environment: prbox runs Compose with a scrubbed one, so every
// variable is unset and a default is what Compose fills in.

// A required variable (`${NAME:?…}`) or a malformed `${…}`: Compose refuses the file.
class Unfilled extends Error {}

const interpolateText = (text: string): string =>
  text.replace(/\$\$|\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, braced: string | undefined) => {
    if (match === "$$") return "$"
    if (braced === undefined) return ""
    const operator = /^([A-Za-z_][A-Za-z0-9_]*)(:?[-?+])?(.*)$/s.exec(braced)
    if (operator === null) throw new Unfilled("invalid interpolation format")
    const [, name, op, word = ""] = operator
    if (op === ":-" || op === "-") return interpolateText(word)
    if (op === ":?" || op === "?") throw new Unfilled(`required variable ${name} is missing a value`)
    return ""
  })

const interpolateAll = (value: unknown): unknown =>
  typeof value === "string"
    ? interpolateText(value)
    : Array.isArray(value)
      ? value.map(interpolateAll)
      : typeof value === "object" && value !== null
        ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, interpolateAll(inner)]))
        : value

export type Interpolated = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly why: string }

/** Every string in `value` interpolated (keys are not, as Compose's), or why Compose would refuse it. */
export const interpolate = (value: unknown): Interpolated => {
  try {
    return { ok: true, value: interpolateAll(value) }
  } catch (error) {
    if (error instanceof Unfilled) return { ok: false, why: error.message }
    throw error
  }
}

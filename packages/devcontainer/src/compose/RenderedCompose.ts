import { Effect } from "effect"
import { parse } from "yaml"
import { DevcontainerError } from "../Errors.ts"

// The configuration `docker compose config` / `docker-compose config` prints
// (YAML; JSON is YAML too), parsed with bounds: the text is the PR's content
// after Compose's interpolation, so a billion-laughs alias bomb or a huge file
// must fail rather than exhaust the daemon.

/** Larger rendered configurations are refused. */
export const MAX_RENDERED_BYTES = 4 * 1024 * 1024
/** At most this many aliases resolved (Compose's own output has none). */
const MAX_ALIASES = 100

const fail = (file: string, detail: string) => Effect.fail(new DevcontainerError({ file, detail }))

/** The rendered configuration as a value: an object with a `services` object, or an error that never echoes it. */
export const parseRenderedCompose = (
  text: string,
  file = "the rendered Compose configuration"
): Effect.Effect<unknown, DevcontainerError> => {
  if (text.length > MAX_RENDERED_BYTES) return fail(file, `larger than ${MAX_RENDERED_BYTES} bytes`)
  let value: unknown
  try {
    value = parse(text, { maxAliasCount: MAX_ALIASES, uniqueKeys: true, prettyErrors: false })
  } catch (error) {
    // yaml's errors carry a code; the alias bound throws a ReferenceError without one. Never the text itself.
    const code =
      typeof error === "object" && error !== null && "code" in error
        ? String(error.code).toLowerCase().replaceAll("_", " ")
        : error instanceof ReferenceError && /alias/i.test(error.message)
          ? "too many aliases"
          : "unreadable"
    return fail(file, `not valid YAML (${code})`)
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return fail(file, "expected a Compose configuration (a mapping)")
  }
  const services = (value as Record<string, unknown>).services
  if (services === null || typeof services !== "object" || Array.isArray(services)) {
    return fail(file, "expected services: a mapping of service names")
  }
  return Effect.succeed(value)
}

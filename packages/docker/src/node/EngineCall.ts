import { Effect, Schema } from "effect"
import {
  DockerEngineError,
  EngineAuthFailed,
  EngineHostUntrusted,
  EngineUnavailable,
  type ErrorFields
} from "../DockerError.ts"
import { SshRefusal } from "./SshConnection.ts"

/*
 * One request to the engine: its failure classified into our errors, the
 * part of its answer we use validated. Only the docker package sees these.
 */

// Failures of the connection itself, as opposed to answers of the engine.
const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET", // also how docker-modem reports its request timeout ("socket hang up")
  "ENOENT",
  "EACCES",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

type ErrorClass = new (fields: ErrorFields) => unknown
type StatusErrors = { readonly [status: number]: ErrorClass }
type Instance<C> = C extends new (fields: ErrorFields) => infer E ? E : never
type Classified<M extends StatusErrors> =
  | Instance<M[keyof M]>
  | EngineUnavailable
  | EngineAuthFailed
  | EngineHostUntrusted
  | DockerEngineError

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** Removes every occurrence of the given secrets (env values) from an engine message. */
export const redact = (text: string, secrets: ReadonlyArray<string>): string =>
  secrets
    .filter((secret) => secret.length > 0)
    .sort((a, b) => b.length - a.length)
    .reduce((acc, secret) => acc.split(secret).join("[redacted]"), text)

/**
 * The one place dockerode failures become our errors: `statuses` names the
 * error for the HTTP answers that mean something to the operation (404, 304,
 * 409); connection failures are EngineUnavailable (over SSH, a refused host
 * key or login has its own error); anything else is
 * DockerEngineError.
 */
export const classify =
  <M extends StatusErrors>(operation: string, statuses: M, secrets: ReadonlyArray<string> = []) =>
  (cause: unknown): Classified<M> => {
    if (cause instanceof SshRefusal) {
      const fields = { operation, detail: cause.message }
      if (cause.kind === "auth") return new EngineAuthFailed(fields)
      if (cause.kind === "host-key") return new EngineHostUntrusted(fields)
      return new EngineUnavailable(fields)
    }
    const record = isRecord(cause) ? cause : {}
    const engineMessage = isRecord(record.json) ? record.json.message : undefined
    const message = typeof engineMessage === "string" ? engineMessage : record.message
    const detail = redact(typeof message === "string" ? message.trim() : String(cause), secrets)
    const statusCode = typeof record.statusCode === "number" ? record.statusCode : undefined
    if (statusCode !== undefined) {
      const specific = statuses[statusCode]
      if (specific !== undefined) return new specific({ operation, detail }) as Instance<M[keyof M]>
      return new DockerEngineError({ operation, detail, statusCode })
    }
    // ssh2 marks connection and authentication failures with `level`.
    const sshFailure = typeof record.level === "string" && record.level.startsWith("client-")
    if ((typeof record.code === "string" && unreachableCodes.has(record.code)) || sshFailure) {
      return new EngineUnavailable({ operation, detail })
    }
    return new DockerEngineError({ operation, detail })
  }

export const call = <A, M extends StatusErrors>(
  operation: string,
  run: (signal: AbortSignal) => Promise<A>,
  statuses: M,
  secrets?: ReadonlyArray<string>
): Effect.Effect<A, Classified<M>> => Effect.tryPromise({ try: run, catch: classify(operation, statuses, secrets) })

/** Validates the part of an engine answer we use; a malformed answer is an engine error, not a crash. */
export const decode =
  <A>(operation: string, schema: Schema.ConstraintDecoder<A>) =>
  (value: unknown): Effect.Effect<A, DockerEngineError> =>
    Schema.decodeUnknownEffect(schema)(value).pipe(
      Effect.mapError((error) => new DockerEngineError({ operation, detail: `unexpected answer: ${error.message}` }))
    )

/**
 * Refuses entries the engine would reject, because its rejection (at create,
 * or later at start) quotes the whole entry, value included.
 */
export const envList = (operation: string, env: Readonly<Record<string, string>>) =>
  Effect.forEach(Object.entries(env), ([key, value]) =>
    key.length === 0 || /[=\0]/.test(key) || value.includes("\0")
      ? Effect.fail(new DockerEngineError({ operation, detail: `invalid environment variable ${JSON.stringify(key)}` }))
      : Effect.succeed(`${key}=${value}`)
  )

/** A label filter (`Docker.ts` LabelFilter) as the engine's list calls take it: their `filters` parameter. */
export const labelFilters = (labels: Readonly<Record<string, string | undefined>>): string =>
  JSON.stringify({
    label: Object.entries(labels).map(([key, value]) => (value === undefined ? key : `${key}=${value}`))
  })

/** A removal: "removed", or "absent" where the engine answers 404 (already gone is what removing asks for). */
export const removal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.as("removed" as const),
    Effect.catchIf(
      (error) => error instanceof DockerEngineError && error.statusCode === 404,
      () => Effect.succeed("absent" as const)
    )
  )

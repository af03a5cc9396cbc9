import { spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import { homedir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Result } from "effect"
import { RegistryCredentials } from "../Credentials.ts"
import { credentialSource, helperAnswer } from "../DockerConfig.ts"
import { CredentialsUnavailable } from "../RegistryError.ts"

export interface Options {
  /** Where `DOCKER_CONFIG`, `HOME` and `PATH` are read, at each lookup; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv
}

const HELPER_TIMEOUT_MS = 30_000
// A helper's answer is a small JSON object.
const MAX_HELPER_OUTPUT = 64 * 1024

/** What Docker's helpers print when they keep nothing for the registry (exit 1): no credentials, not a failure. */
const NOT_FOUND = /credentials not found/i

interface HelperRun {
  readonly exitCode: number | null
  readonly stdout: string
}

/** Runs `docker-credential-<helper> get`, the registry on stdin; its output is never shown to anyone. */
const runHelper = (helper: string, registry: string, env: NodeJS.ProcessEnv) =>
  Effect.callback<HelperRun, string>((resume) => {
    const child = spawn(`docker-credential-${helper}`, ["get"], { env, stdio: ["pipe", "pipe", "ignore"] })
    let stdout = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      resume(Effect.fail(`did not answer within ${HELPER_TIMEOUT_MS / 1000} s`))
    }, HELPER_TIMEOUT_MS)
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk
      if (stdout.length > MAX_HELPER_OUTPUT) child.kill("SIGKILL")
    })
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resume(Effect.fail(error.code === "ENOENT" ? "is not on PATH" : `could not run (${error.code ?? "error"})`))
    })
    child.on("close", (exitCode) => {
      clearTimeout(timer)
      resume(Effect.succeed({ exitCode, stdout }))
    })
    // A helper that exits without reading its stdin must not fail the lookup with EPIPE.
    child.stdin.on("error", () => {})
    child.stdin.end(registry)
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })

/**
 * Reads the user's Docker credentials as the docker CLI does: config.json
 * in `DOCKER_CONFIG` (else `~/.docker`); a missing file keeps none. A
 * credential helper's output and the file's values never reach an error.
 */
export const layer = (options: Options = {}) =>
  Layer.succeed(
    RegistryCredentials,
    RegistryCredentials.of({
      forRegistry: Effect.fn("RegistryCredentials.forRegistry")(function* (registry) {
        const env = options.env ?? process.env
        const dir = env.DOCKER_CONFIG ?? join(env.HOME ?? homedir(), ".docker")
        const path = join(dir, "config.json")
        const unavailable = (operation: string, detail: string) =>
          new CredentialsUnavailable({ operation, registry, detail })
        const text = yield* Effect.tryPromise({
          try: () => readFile(path, "utf8"),
          catch: (cause) => cause as NodeJS.ErrnoException
        }).pipe(
          Effect.catch((cause) =>
            cause.code === "ENOENT"
              ? Effect.succeed(undefined)
              : Effect.fail(unavailable("docker-config.read", `${path} cannot be read (${cause.code ?? "error"})`))
          )
        )
        if (text === undefined) return undefined
        const parsed = yield* Effect.try({
          try: () => JSON.parse(text) as unknown,
          catch: () => unavailable("docker-config.read", `${path} is not valid JSON`)
        })
        const source = credentialSource(parsed, registry)
        if (Result.isFailure(source)) return yield* unavailable("docker-config.read", `${path}: ${source.failure}`)
        if (source.success._tag === "None") return undefined
        if (source.success._tag === "Stored") return source.success.credentials
        const helper = source.success.helper
        const operation = "credential-helper.get"
        const run = yield* runHelper(helper, registry, env).pipe(
          Effect.mapError((detail) => unavailable(operation, `docker-credential-${helper} ${detail}`))
        )
        if (run.exitCode !== 0) {
          if (NOT_FOUND.test(run.stdout)) return undefined
          return yield* unavailable(
            operation,
            `docker-credential-${helper} get exited ${run.exitCode ?? "on a signal"}`
          )
        }
        const answer = helperAnswer(run.stdout)
        if (Result.isFailure(answer))
          return yield* unavailable(operation, `docker-credential-${helper} ${answer.failure}`)
        return answer.success
      })
    })
  )

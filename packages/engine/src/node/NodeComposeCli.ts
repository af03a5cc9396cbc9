import { Duration, Effect, Layer, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { ComposeCli, ComposeFailed, type ComposeProjectRef } from "../ComposeCli.ts"

/** The last lines of Compose's output a failure keeps. */
const TAIL_LINES = 12
const RENDER_TIMEOUT = Duration.seconds(60)
const CREATE_TIMEOUT = Duration.minutes(10)

/** Variables that choose how Compose reaches its engine: passed on when the daemon has them, and nothing else. */
const ENGINE_VARIABLES = ["DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"] as const

/**
 * Compose's whole environment: PATH (to find `docker` and its plugins),
 * HOME (where the Docker CLI keeps its own configuration), the engine's
 * address, and nothing else of the daemon's: a variable the Compose file
 * names is then the project's `.env`'s or empty, never the host's.
 */
export const scrubbedEnvironment = (
  host: Readonly<Record<string, string | undefined>>,
  address: string
): Record<string, string> => {
  const env: Record<string, string> = { PATH: host.PATH ?? "/usr/local/bin:/usr/bin:/bin", DOCKER_HOST: address }
  if (host.HOME !== undefined) env.HOME = host.HOME
  for (const name of ENGINE_VARIABLES) {
    const value = host[name]
    if (value !== undefined) env[name] = value
  }
  return env
}

type Program = readonly [file: string, ...prefix: ReadonlyArray<string>]

/**
 * Compose on the engine at `address` (the daemon's chosen engine). A remote
 * engine is refused: a Compose project's files are this machine's, and the
 * remote runtime carries only a sandbox's own folders.
 */
export const layer = (address: string) =>
  Layer.effect(
    ComposeCli,
    Effect.gen(function* () {
      const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
      const env = scrubbedEnvironment(process.env, address)

      const run = (
        operation: string,
        program: Program,
        args: ReadonlyArray<string>,
        options: { readonly cwd?: string; readonly onLine?: (line: string) => Effect.Effect<void> }
      ) =>
        Effect.scoped(
          Effect.gen(function* () {
            const [file, ...prefix] = program
            const handle = yield* spawner.spawn(
              ChildProcess.make(file, [...prefix, ...args], {
                stdin: "ignore",
                env,
                extendEnv: false,
                ...(options.cwd === undefined ? {} : { cwd: options.cwd })
              })
            )
            const tail: Array<string> = []
            const [stdout, , code] = yield* Effect.all(
              [
                Stream.mkString(Stream.decodeText(handle.stdout)),
                handle.stderr.pipe(
                  Stream.decodeText,
                  Stream.splitLines,
                  Stream.runForEach((line) => {
                    tail.push(line)
                    if (tail.length > TAIL_LINES) tail.shift()
                    return options.onLine === undefined ? Effect.void : options.onLine(line)
                  })
                ),
                handle.exitCode
              ],
              { concurrency: "unbounded" }
            )
            if (code !== 0) {
              return yield* new ComposeFailed({ operation, detail: `exit ${code}: ${tail.join("\n")}`.slice(0, 2000) })
            }
            return stdout
          })
        ).pipe(
          Effect.catchTag("PlatformError", (error) =>
            Effect.fail(new ComposeFailed({ operation, detail: error.message }))
          )
        )

      /** The devcontainers CLI's order: the `docker compose` plugin, else `docker-compose`. */
      const found = yield* Effect.cached(
        Effect.gen(function* () {
          const candidates: ReadonlyArray<Program> = [["docker", "compose"], ["docker-compose"]]
          for (const program of candidates) {
            const version = yield* run("compose.version", program, ["version", "--short"], {}).pipe(Effect.option)
            if (version._tag === "Some") return { program, version: `${program.join(" ")} ${version.value.trim()}` }
          }
          return yield* new ComposeFailed({
            operation: "compose",
            detail:
              "Docker Compose is not installed: neither `docker compose` (the Compose plugin) nor `docker-compose` runs on this machine"
          })
        })
      )

      const local = Effect.suspend(() =>
        address.startsWith("unix://")
          ? found
          : Effect.fail(
              new ComposeFailed({
                operation: "compose",
                detail: `Docker Compose devcontainers run on this machine's Docker engine only; this sandbox's engine is ${address.replace(/\/\/[^@/]*@/, "//")}`
              })
            )
      )

      const projectArgs = (project: ComposeProjectRef) => [
        "--project-name",
        project.name,
        "--project-directory",
        project.directory
      ]

      return {
        version: Effect.map(local, (compose) => compose.version),
        render: (project, files) =>
          Effect.gen(function* () {
            const { program } = yield* local
            const fileArgs = files.flatMap((file) => ["--file", file])
            return yield* run("compose.config", program, [...projectArgs(project), ...fileArgs, "config"], {
              cwd: project.directory
            }).pipe(
              Effect.timeoutOrElse({
                duration: RENDER_TIMEOUT,
                orElse: () => Effect.fail(new ComposeFailed({ operation: "compose.config", detail: "timed out" }))
              })
            )
          }),
        create: (project, file, services, onProgress) =>
          Effect.gen(function* () {
            const { program } = yield* local
            yield* run(
              "compose.up",
              program,
              [...projectArgs(project), "--file", file, "up", "--no-build", "--no-start", ...services],
              { cwd: project.directory, onLine: onProgress }
            ).pipe(
              Effect.timeoutOrElse({
                duration: CREATE_TIMEOUT,
                orElse: () => Effect.fail(new ComposeFailed({ operation: "compose.up", detail: "timed out" }))
              })
            )
          })
      }
    })
  )

import { dirname } from "node:path"
import { type DaemonServiceSpec, invalidServiceSpec } from "@prbox/domain"
import { Effect, FileSystem, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { ServiceManagerFailed } from "../UserService.ts"

/** What the service manager adapters share: running their tool, writing their file. */
export interface Ran {
  /** null: the program could not be run at all (not installed). */
  readonly code: number | null
  readonly stdout: string
  /** Its first line of stderr, or why it could not run. */
  readonly why: string
}

export const run = Effect.fn("UserService.run")(function* (file: string, args: ReadonlyArray<string>) {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const command = ChildProcess.make(file, args, { stdin: "ignore" })
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const handle = yield* spawner.spawn(command)
      const [stdout, stderr, code] = yield* Effect.all(
        [
          Stream.mkString(Stream.decodeText(handle.stdout)),
          Stream.mkString(Stream.decodeText(handle.stderr)),
          handle.exitCode
        ],
        { concurrency: "unbounded" }
      )
      return { code: code as number, stdout, why: stderr.trim().split("\n")[0] || `exit ${code}` } satisfies Ran
    })
  ).pipe(
    Effect.timeout("30 seconds"),
    Effect.catch((error) => Effect.succeed<Ran>({ code: null, stdout: "", why: `${file}: ${error.message}` }))
  )
})

export const failed = (operation: string, ran: Ran) =>
  new ServiceManagerFailed({ operation, message: `${operation}: ${ran.why}` })

/** Runs a step of the manager; a non-zero exit fails with its own words. */
export const step = (operation: string, file: string, args: ReadonlyArray<string>) =>
  run(file, args).pipe(
    Effect.flatMap((ran) => (ran.code === 0 ? Effect.succeed(ran) : Effect.fail(failed(operation, ran))))
  )

export const fileError = (operation: string) => (error: { readonly message: string }) =>
  new ServiceManagerFailed({ operation, message: `${operation}: ${error.message}` })

/** Writes `text` to `path` through a temporary file and a rename: never a half-written unit. */
export const writeFileAtomically = (path: string, text: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const previous = yield* fs.readFileString(path).pipe(Effect.orElseSucceed(() => undefined))
    if (previous === text) return false
    yield* fs.makeDirectory(dirname(path), { recursive: true })
    const temporary = `${path}.${process.pid}.tmp`
    yield* fs.writeFileString(temporary, text, { mode: 0o644 })
    yield* fs.rename(temporary, path)
    return true
  }).pipe(Effect.mapError(fileError(`write ${path}`)))

export const exists = (path: string) =>
  FileSystem.FileSystem.use((fs) => fs.exists(path)).pipe(Effect.orElseSucceed(() => false))

export const checkedSpec = (spec: DaemonServiceSpec, manager: "systemd" | "launchd") => {
  const problem = invalidServiceSpec(spec, manager)
  return problem === undefined
    ? Effect.succeed(spec)
    : Effect.fail(new ServiceManagerFailed({ operation: "render the service", message: problem }))
}

/** `KEY=value` lines (systemctl show, show-environment) as a record. */
export const keyValues = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split("\n")
      .map((line) => /^([^=]+)=(.*)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => [match[1] as string, match[2] as string])
  )

export type Platform = ChildProcessSpawner.ChildProcessSpawner | FileSystem.FileSystem

/** Gives an effect this layer's spawner and file system, so that the service's methods need nothing. */
export const providing = Effect.gen(function* () {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const fs = yield* FileSystem.FileSystem
  return <A, E>(effect: Effect.Effect<A, E, Platform>): Effect.Effect<A, E> =>
    effect.pipe(
      Effect.provideService(ChildProcessSpawner.ChildProcessSpawner, spawner),
      Effect.provideService(FileSystem.FileSystem, fs)
    )
})

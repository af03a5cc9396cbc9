import { Effect, FileSystem, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"

/**
 * Host commands that build something prbox ships (the code-server
 * distribution, the default image's root filesystem): each line of their
 * output becomes a progress line, and a failure keeps the last lines so the
 * error says why.
 */

const TAIL_LINES = 12

/** A build step failed: what it was and the end of its output. */
export interface StepFailure {
  readonly step: string
  readonly detail: string
}

/** Runs `file args` with its output (stdout and stderr) as progress lines; fails with the step's last lines. */
export const runStep = Effect.fn("HostSteps.runStep")(function* (
  step: string,
  file: string,
  args: ReadonlyArray<string>,
  options: {
    readonly env?: Record<string, string | undefined>
    readonly onProgress: (line: string) => Effect.Effect<void>
  }
) {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const command = ChildProcess.make(file, args, {
    stdin: "ignore",
    ...(options.env === undefined ? {} : { env: options.env, extendEnv: true })
  })
  const tail: Array<string> = []
  const failure = (detail: string): StepFailure => ({ step, detail })
  const code = yield* Effect.scoped(
    Effect.gen(function* () {
      const handle = yield* spawner.spawn(command)
      yield* handle.all.pipe(
        Stream.decodeText,
        Stream.splitLines,
        Stream.runForEach((line) => {
          tail.push(line)
          if (tail.length > TAIL_LINES) tail.shift()
          return options.onProgress(line)
        })
      )
      return yield* handle.exitCode
    })
  ).pipe(Effect.mapError((error) => failure(error.message)))
  if (code !== 0) return yield* Effect.fail(failure(`exit ${code}${tail.length > 0 ? `: ${tail.join("\n")}` : ""}`))
})

/** A command's standard output, trimmed; fails when it cannot run or exits non-zero. */
export const commandOutput = Effect.fn("HostSteps.commandOutput")(function* (
  step: string,
  file: string,
  args: ReadonlyArray<string>,
  env?: Record<string, string | undefined>
) {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const command = ChildProcess.make(file, args, {
    stdin: "ignore",
    ...(env === undefined ? {} : { env, extendEnv: true })
  })
  const failure = (detail: string): StepFailure => ({ step, detail })
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const handle = yield* spawner.spawn(command)
      const [output, code] = yield* Effect.all(
        [Stream.mkString(Stream.decodeText(handle.stdout)), handle.exitCode, Stream.runDrain(handle.stderr)],
        { concurrency: "unbounded" }
      )
      return code === 0 ? output.trim() : yield* Effect.fail(failure(`exit ${code}`))
    })
  ).pipe(Effect.mapError((error) => ("step" in error ? error : failure(error.message))))
})

/** The first `name` among the directories of PATH, if any. */
export const onPath = Effect.fn("HostSteps.onPath")(function* (name: string) {
  const fs = yield* FileSystem.FileSystem
  for (const dir of (process.env.PATH ?? "").split(":").filter((dir) => dir.length > 0)) {
    const candidate = `${dir}/${name}`
    if (yield* fs.exists(candidate).pipe(Effect.orElseSucceed(() => false))) return candidate
  }
  return undefined
})

/** `$PRBOX_CACHE/<name>` (default `$XDG_CACHE_HOME/prbox`, `~/.cache/prbox`): where rebuildable archives are kept. */
export const cacheDirectory = (name: string): string => {
  const xdg = process.env.XDG_CACHE_HOME || `${process.env.HOME ?? "/root"}/.cache`
  return `${process.env.PRBOX_CACHE || `${xdg}/prbox`}/${name}`
}

import type { DockerShape } from "@prbox/docker"
import { makeOutputBound } from "@prbox/domain"
import { Deferred, Effect, Fiber, Option, Schedule } from "effect"
import type { CommandOptions, ExecOutcome, RunningCommand, RuntimeExecOptions } from "../../ContainerRuntime.ts"
import { CwdRefused, RuntimeError } from "../../Errors.ts"
import { CWD_NOT_FOLDER } from "../../exec/CommandPlace.ts"
import { RESOLVE_SH } from "../../exec/WorkspaceResolve.ts"

/**
 * Commands Docker can be made to kill. Docker cannot kill an exec, so every
 * command runs as `sh -c SUPERVISOR prbox-exec <argv...>`: the shell prints
 * its pid as the first line of stdout, then becomes the command (`exec`). A
 * docker exec process leads its own process group, so at the deadline or on
 * interruption a second exec (as root) kills the whole group, children
 * included, and confirms it is gone.
 */

const START = 'echo "$$" || exit 125\nexec "$@"\n'

/** With `within`: resolve `$1` inside `$2` in the container and go there, all before the pid line. */
const START_WITHIN = `${RESOLVE_SH}prbox_resolve "$2" "$1" 1
[ -d "$R" ] && cd -- "$R" || exit ${CWD_NOT_FOLDER}
shift 2
${START}`

/**
 * Kills process group `$1`, then looks in /proc for a live member (`pid
 * (comm) state ppid pgrp ...`; zombies are dead). `kill`'s own status is
 * not trusted to mean "gone": dash refuses `kill -- -<pid>` as an illegal
 * number, which would read as success.
 */
const KILL_GROUP = `pg=$1
kill -KILL "-$pg" 2>/dev/null
for stat in /proc/[0-9]*/stat; do
  read -r line < "$stat" 2>/dev/null || continue
  set -- \${line##*) }
  [ "$3" = "$pg" ] && [ "$1" != Z ] && exit 1
done
exit 0
`

/** How long a killed command's output may take to end before its stream is closed anyway. */
const DRAIN_AFTER_KILL = "5 seconds"
/** The pid line comes first; at a deadline it is waited for this long before giving up on the kill. */
const PID_GRACE = "5 seconds"

const supervised = (argv: ReadonlyArray<string>, options: CommandOptions) =>
  options.within === undefined
    ? { argv: ["sh", "-c", START, "prbox-exec", ...argv], workingDir: options.cwd }
    : { argv: ["sh", "-c", START_WITHIN, "prbox-exec", options.cwd, options.within, ...argv], workingDir: "/" }

interface Ended {
  /** Null when it was killed at its deadline. */
  readonly exitCode: number | null
  readonly timedOut: boolean
}

type Output = (stream: "stdout" | "stderr", chunk: Uint8Array) => void

export const supervisedExecFor = (docker: DockerShape) => {
  const toRuntimeError = (error: { readonly message: string }) =>
    new RuntimeError({ operation: "exec", detail: error.message })

  /** Kills the process group `pid` leads, retrying until `kill -0` finds none left. */
  const killGroup = Effect.fn("NodeContainerRuntime.killGroup")(function* (containerId: string, pid: number) {
    const confirmed = yield* docker
      .exec(containerId, {
        argv: ["sh", "-c", KILL_GROUP, "prbox-kill", String(pid)],
        user: "0",
        timeoutMs: 10_000,
        maxOutputBytes: 1024
      })
      .pipe(
        Effect.repeat({ schedule: Schedule.spaced(50), until: (result) => result.exitCode === 0, times: 40 }),
        Effect.mapError(toRuntimeError)
      )
    if (confirmed.exitCode !== 0) {
      return yield* new RuntimeError({ operation: "exec.kill", detail: `process group ${pid} is still alive` })
    }
  })

  /**
   * Runs a supervised command to its end or its deadline. `started` gets its
   * pid once the supervisor printed it, or the reason it never started.
   */
  const run = (
    containerId: string,
    argv: ReadonlyArray<string>,
    options: CommandOptions,
    stdin: RuntimeExecOptions["stdin"],
    onOutput: Output,
    started: Deferred.Deferred<number, RuntimeError | CwdRefused>
  ) =>
    Effect.gen(function* () {
      let pid: number | undefined
      let pending = new Uint8Array()
      const route: Output = (stream, chunk) => {
        if (stream === "stderr" || pid !== undefined) return onOutput(stream, chunk)
        const joined = new Uint8Array(pending.length + chunk.length)
        joined.set(pending)
        joined.set(chunk, pending.length)
        const newline = joined.indexOf(10)
        if (newline < 0) {
          pending = joined
          return
        }
        pid = Number(new TextDecoder().decode(joined.subarray(0, newline)))
        Deferred.doneUnsafe(started, Effect.succeed(pid))
        if (newline + 1 < joined.length) onOutput("stdout", joined.subarray(newline + 1))
      }
      const command = supervised(argv, options)
      const stream = yield* docker
        .execStreamed(
          containerId,
          {
            argv: command.argv,
            user: options.user,
            cwd: command.workingDir,
            ...(options.env === undefined ? {} : { env: options.env }),
            ...(stdin === undefined ? {} : { stdin })
          },
          route
        )
        .pipe(Effect.mapError(toRuntimeError), Effect.forkChild)
      const kill = Effect.suspend(() => (pid === undefined ? Effect.void : killGroup(containerId, pid)))
      const ended = yield* Fiber.join(stream).pipe(
        Effect.timeoutOption(options.timeoutMs),
        Effect.onInterrupt(() => kill.pipe(Effect.ignore))
      )
      if (Option.isSome(ended)) {
        const { exitCode } = ended.value
        if (pid === undefined) {
          const refused = options.within !== undefined && exitCode >= 120 && exitCode <= CWD_NOT_FOLDER
          const failure = refused
            ? new CwdRefused({ exitCode })
            : new RuntimeError({
                operation: "exec",
                detail: `the command did not start (exit ${exitCode}); is sh in the image?`
              })
          return yield* failure
        }
        return { exitCode, timedOut: false } satisfies Ended
      }
      yield* Deferred.await(started).pipe(Effect.timeoutOption(PID_GRACE), Effect.ignore)
      yield* kill
      yield* Fiber.join(stream).pipe(Effect.timeoutOption(DRAIN_AFTER_KILL), Effect.ignore)
      yield* Fiber.interrupt(stream)
      return { exitCode: null, timedOut: true } satisfies Ended
    }).pipe(
      Effect.tapError((error) => Deferred.fail(started, error)),
      Effect.ensuring(
        Deferred.fail(started, new RuntimeError({ operation: "exec", detail: "the command ended before it started" }))
      )
    )

  const exec = Effect.fn("NodeContainerRuntime.exec")(function* (
    containerId: string,
    argv: ReadonlyArray<string>,
    options: RuntimeExecOptions
  ) {
    const startedAt = Date.now()
    const stdout = makeOutputBound(options.maxOutputBytes)
    const stderr = makeOutputBound(options.maxOutputBytes)
    const started = yield* Deferred.make<number, RuntimeError | CwdRefused>()
    const ended = yield* run(
      containerId,
      argv,
      options,
      options.stdin,
      (stream, chunk) => {
        const sink = stream === "stdout" ? stdout : stderr
        sink.add(chunk)
        options.onOutput?.(stream, chunk)
      },
      started
    )
    const out = stdout.result()
    const err = stderr.result()
    const outcome: ExecOutcome = {
      exitCode: ended.exitCode,
      stdout: out.text,
      stderr: err.text,
      truncated: out.truncated || err.truncated,
      timedOut: ended.timedOut,
      durationMs: Date.now() - startedAt
    }
    return outcome
  })

  const spawn = Effect.fn("NodeContainerRuntime.spawn")(function* (
    containerId: string,
    argv: ReadonlyArray<string>,
    options: CommandOptions,
    onOutput: (chunk: Uint8Array) => void
  ) {
    const started = yield* Deferred.make<number, RuntimeError | CwdRefused>()
    // Detached: a background command outlives the request that started it.
    const fiber = yield* run(containerId, argv, options, undefined, (_stream, chunk) => onOutput(chunk), started).pipe(
      Effect.forkDetach
    )
    const pid = yield* Deferred.await(started)
    let killed = false
    const running: RunningCommand = {
      exit: Fiber.join(fiber).pipe(
        // Refusals come before the pid line, so none is left once it ran.
        Effect.mapError((error) =>
          error._tag === "CwdRefused" ? new RuntimeError({ operation: "exec", detail: error.message }) : error
        ),
        Effect.map((ended) => ({
          exitCode: killed ? null : ended.exitCode,
          timedOut: ended.timedOut,
          killed: killed && !ended.timedOut
        }))
      ),
      kill: Effect.suspend(() => {
        killed = true
        return killGroup(containerId, pid)
      }).pipe(Effect.catch((error) => Effect.logWarning("could not kill a background command", error.message)))
    }
    return running
  })

  return { exec, spawn }
}

import type { Readable } from "node:stream"
import { Writable } from "node:stream"
import type Dockerode from "dockerode"
import { Effect, Option, Schedule } from "effect"
import type { Unreachable } from "../Docker.ts"
import { ContainerNotFound, DockerEngineError, EngineUnavailable } from "../DockerError.ts"
import type { ExecInput, StreamedExecOptions } from "../DockerTypes.ts"
import { demuxStream } from "./Demux.ts"
import { ExecAnswer } from "./EngineAnswers.ts"
import { call, classify, decode, envList } from "./EngineCall.ts"
import { cappedSink } from "./ExecOutput.ts"

const OPERATION = "container.exec"

/** Creates an exec (not started); env values are redacted from the engine's messages. */
export const createExec = (
  api: Dockerode,
  id: string,
  options: StreamedExecOptions,
  { attach }: { readonly attach: boolean }
) =>
  Effect.flatMap(envList(OPERATION, options.env ?? {}), (env) =>
    call(
      OPERATION,
      () =>
        api.getContainer(id).exec({
          Cmd: [...options.argv],
          AttachStdin: attach && options.stdin !== undefined,
          AttachStdout: attach,
          AttachStderr: attach,
          Tty: false,
          Env: env,
          User: options.user,
          WorkingDir: options.cwd
        }),
      { 404: ContainerNotFound },
      Object.values(options.env ?? {})
    )
  )

export const inspectExec = (exec: Dockerode.Exec, secrets: ReadonlyArray<string>) =>
  call(OPERATION, () => exec.inspect(), {}, secrets).pipe(Effect.flatMap(decode(OPERATION, ExecAnswer)))

/** The exit code of an exec whose output ended (the engine can record it a moment after). */
export const exitCodeOf = (exec: Dockerode.Exec, secrets: ReadonlyArray<string>) =>
  inspectExec(exec, secrets).pipe(
    Effect.repeat({ schedule: Schedule.spaced(20), until: (answer) => !answer.Running, times: 100 }),
    Effect.flatMap((answer) =>
      answer.ExitCode === null
        ? Effect.fail(new DockerEngineError({ operation: OPERATION, detail: "the exec has no exit code" }))
        : Effect.succeed(answer.ExitCode)
    )
  )

const forward = (onChunk: (chunk: Uint8Array) => void) =>
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      onChunk(chunk)
      done()
    }
  })

const cutShort = new EngineUnavailable({ operation: OPERATION, detail: "output stream closed before the end" })

/** A stream closed without its end: the end after all when the engine says the exec has finished. */
const closedEarly = (answer: Option.Option<typeof ExecAnswer.Type>) =>
  Option.isSome(answer) && !answer.value.Running && answer.value.ExitCode !== null ? Effect.void : Effect.fail(cutShort)

/**
 * Starts a created exec, writes `stdin` and closes it (as `docker exec -i`
 * does) or hands its sink to it (an ExecInput), and hands every output chunk to `onOutput` until the output ends.
 * Interruption closes the stream; the process itself goes on (Docker cannot
 * kill an exec: the caller kills it inside the container).
 */
const streamExec = (
  exec: Dockerode.Exec,
  stdin: Uint8Array | ExecInput | undefined,
  onOutput: (stream: "stdout" | "stderr", chunk: Uint8Array) => void,
  secrets: ReadonlyArray<string>
) =>
  Effect.callback<void, ContainerNotFound | Unreachable>((resume) => {
    let stream: (Readable & { end?: () => void; write?: (chunk: Uint8Array) => boolean }) | undefined
    let interrupted = false
    let ended = false
    const failed = (cause: unknown) =>
      resume(Effect.fail(classify(OPERATION, { 404: ContainerNotFound }, secrets)(cause)))
    exec.start({ hijack: true, stdin: stdin !== undefined }).then((duplex: typeof stream) => {
      if (duplex === undefined) return failed(new Error("no output stream"))
      if (interrupted) return duplex.destroy()
      stream = duplex
      demuxStream(
        duplex,
        forward((chunk) => onOutput("stdout", chunk)),
        forward((chunk) => onOutput("stderr", chunk))
      )
      duplex.on("end", () => {
        ended = true
        resume(Effect.void)
      })
      duplex.on("error", failed)
      // A transport can close the stream rather than end it once the exec is over (an SSH
      // channel's socket destroyed as the engine hangs up): the engine is asked whether the
      // exec ran to its end, which makes the output that arrived all there is.
      duplex.on("close", () => {
        if (!ended) resume(Effect.flatMap(inspectExec(exec, secrets).pipe(Effect.option), closedEarly))
      })
      if (typeof stdin === "function") {
        stdin({ write: (chunk) => void duplex.write?.(chunk), end: () => duplex.end?.() })
      } else if (stdin !== undefined) {
        duplex.write?.(stdin)
        duplex.end?.()
      }
    }, failed)
    return Effect.sync(() => {
      interrupted = true
      stream?.destroy()
    })
  })

/** Runs a created exec to its end, keeping at most `maxOutputBytes` of each of stdout and stderr. */
export const runExec = (exec: Dockerode.Exec, maxOutputBytes: number, secrets: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    const stdout = cappedSink(maxOutputBytes)
    const stderr = cappedSink(maxOutputBytes)
    const onOutput = (stream: "stdout" | "stderr", chunk: Uint8Array) =>
      (stream === "stdout" ? stdout : stderr).add(chunk)
    return Effect.map(streamExec(exec, undefined, onOutput, secrets), () => ({
      stdout: stdout.text(),
      stderr: stderr.text(),
      truncated: stdout.truncated() || stderr.truncated()
    }))
  })

/** Runs `argv` with its output streamed to `onOutput`; its exit code once the output ended. */
export const makeExecStreamed =
  (api: Dockerode) =>
  (id: string, options: StreamedExecOptions, onOutput: (stream: "stdout" | "stderr", chunk: Uint8Array) => void) =>
    Effect.gen(function* () {
      const secrets = Object.values(options.env ?? {})
      const exec = yield* createExec(api, id, options, { attach: true })
      yield* streamExec(exec, options.stdin, onOutput, secrets)
      return { exitCode: yield* exitCodeOf(exec, secrets) }
    }).pipe(Effect.withSpan("Docker.execStreamed"))

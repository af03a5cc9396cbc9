import { PassThrough, type Readable, type Writable } from "node:stream"
import type Dockerode from "dockerode"
import { Effect } from "effect"
import type { ExecPipe } from "../Docker.ts"
import { ContainerNotFound } from "../DockerError.ts"
import type { DetachedExecOptions } from "../DockerTypes.ts"
import { demuxStream } from "./Demux.ts"
import { call } from "./EngineCall.ts"
import { createExec, exitCodeOf } from "./ExecStream.ts"

const OPERATION = "container.exec"

/**
 * Starts `argv` with stdin attached and returns its streams at once; stderr
 * goes to `onStderr`. Closing the scope destroys the connection (the command
 * sees its stdin end); Docker cannot kill an exec, so the command must end
 * when its stdin does.
 */
export const makeExecPipe =
  (api: Dockerode) => (id: string, options: DetachedExecOptions, onStderr: (chunk: Uint8Array) => void) =>
    Effect.gen(function* () {
      const secrets = Object.values(options.env ?? {})
      const exec = yield* createExec(api, id, { ...options, stdin: new Uint8Array() }, { attach: true })
      const duplex = yield* Effect.acquireRelease(
        call(
          OPERATION,
          () => exec.start({ hijack: true, stdin: true }) as Promise<Readable & Writable>,
          { 404: ContainerNotFound },
          secrets
        ),
        (stream) => Effect.sync(() => stream.destroy())
      )
      const output = new PassThrough()
      const stderr = new PassThrough()
      stderr.on("data", (chunk: Buffer) => onStderr(chunk))
      demuxStream(duplex, output, stderr)
      duplex.once("end", () => output.end())
      duplex.once("close", () => output.end())
      duplex.on("error", (error) => output.destroy(error))
      return { input: duplex, output, exitCode: exitCodeOf(exec, secrets) } satisfies ExecPipe
    }).pipe(Effect.withSpan("Docker.execPipe"))

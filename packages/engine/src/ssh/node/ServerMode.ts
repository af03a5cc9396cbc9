import type { Readable } from "node:stream"
import { Effect } from "effect"
import { RuntimeError } from "../../Errors.ts"

/** How long the sandbox's server may take to say how it serves. */
const SERVER_TIMEOUT = "30 seconds"

const failure = (detail: string) => new RuntimeError({ operation: "ssh.open", detail })

/**
 * How the sandbox's SSH server serves, from the first byte it writes: "S",
 * over the socket it dialled; "I", over its stdin and stdout (what follows
 * is SSH). Anything else, or nothing, fails: the sandbox wrote it.
 */
export const serverMode = (output: Readable): Effect.Effect<"socket" | "stdio", RuntimeError> =>
  Effect.callback<"socket" | "stdio", RuntimeError>((resume) => {
    const stop = () => {
      output.removeListener("readable", onReadable)
      output.removeListener("end", onEnd)
      output.removeListener("error", onEnd)
    }
    const onReadable = () => {
      const byte = output.read(1) as Buffer | null
      if (byte === null) return
      stop()
      const mode = byte[0] === 0x53 ? "socket" : byte[0] === 0x49 ? "stdio" : undefined
      resume(mode === undefined ? Effect.fail(failure("the sandbox's SSH server did not start")) : Effect.succeed(mode))
    }
    const onEnd = () => {
      stop()
      resume(Effect.fail(failure("the sandbox's SSH server ended before it started")))
    }
    output.on("readable", onReadable)
    output.once("end", onEnd)
    output.once("error", onEnd)
    return Effect.sync(stop)
  }).pipe(
    Effect.timeoutOrElse({
      duration: SERVER_TIMEOUT,
      orElse: () => Effect.fail(failure("the sandbox's SSH server did not start in time"))
    })
  )

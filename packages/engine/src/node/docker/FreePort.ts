import { createServer } from "node:net"
import { Effect } from "effect"
import { RuntimeError } from "../../Errors.ts"

const ATTEMPTS = 20

/** One port the kernel hands out on 127.0.0.1 (from its ephemeral range), released at once. */
const askKernel = Effect.callback<number, RuntimeError>((resume) => {
  const server = createServer()
  server.once("error", (error) =>
    resume(Effect.fail(new RuntimeError({ operation: "port.pick", detail: error.message })))
  )
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/**
 * A free host port outside `reserved`. Docker would pick one at start, but
 * anew at every start: a port chosen here is fixed into the container at create.
 */
export const freePort = (reserved: ReadonlySet<number>): Effect.Effect<number, RuntimeError> =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const port = yield* askKernel
      if (port > 0 && !reserved.has(port)) return port
    }
    return yield* new RuntimeError({ operation: "port.pick", detail: `no free port in ${ATTEMPTS} attempts` })
  })

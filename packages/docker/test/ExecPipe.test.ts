import { randomBytes } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Docker, NodeDocker } from "../src/index.ts"
import { runningHealthz } from "./fixtures.ts"

const missingId = "0".repeat(64)

/** Everything `readable` gives until it ends. */
const drain = (readable: NodeJS.ReadableStream) =>
  Effect.callback<Buffer, Error>((resume) => {
    const chunks: Array<Buffer> = []
    readable.on("data", (chunk: Buffer) => chunks.push(chunk))
    readable.on("end", () => resume(Effect.succeed(Buffer.concat(chunks))))
    readable.on("error", (error) => resume(Effect.fail(error)))
  })

// Real time: the exec's exit code is polled.
layer(NodeDocker.layer(), { excludeTestServices: true })("Docker.execPipe against the local engine", (it) => {
  it.effect(
    "streams stdin to the command and its stdout back, stderr apart, ending with its stdin; then its exit code",
    () =>
      Effect.gen(function* () {
        const docker = yield* Docker
        const { id } = yield* runningHealthz()
        const stderr: Array<Uint8Array> = []
        const payload = randomBytes(4 * 1024 * 1024)
        const { output, exitCode } = yield* Effect.scoped(
          Effect.gen(function* () {
            const pipe = yield* docker.execPipe(
              id,
              { argv: ["sh", "-c", "echo to-stderr >&2; cat; exit 3"], user: "4321", cwd: "/tmp" },
              (chunk) => stderr.push(chunk)
            )
            pipe.input.end(payload)
            const output = yield* drain(pipe.output)
            return { output, exitCode: yield* pipe.exitCode }
          })
        )
        assert.isTrue(output.equals(payload))
        assert.strictEqual(exitCode, 3)
        assert.strictEqual(Buffer.concat(stderr).toString("utf8"), "to-stderr\n")
        const gone = yield* Effect.flip(Effect.scoped(docker.execPipe(missingId, { argv: ["true"] }, () => undefined)))
        assert.strictEqual(gone._tag, "ContainerNotFound")
      })
  )
})

import * as Net from "node:net"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { Git, NodeGit } from "../src/index.ts"
import { gitSync, tempDir } from "./helpers.ts"

const run = (args: ReadonlyArray<string>, options: Parameters<Git["Service"]["run"]>[1]) =>
  Git.use((git) => git.run(args, options)).pipe(Effect.provide(NodeGit.layer))

describe("NodeGit", () => {
  it.effect("passes the user's environment through, with prompts off and English messages", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const output = yield* run(["-c", "alias.env-probe=!env", "env-probe"], {
        cwd,
        timeoutMs: 10_000,
        env: { PRBOX_PROBE: "yes", GIT_TERMINAL_PROMPT: "1" }
      })
      assert.strictEqual(output.exitCode, 0)
      const env = output.stdout.split("\n")
      assert.include(env, "GIT_TERMINAL_PROMPT=0")
      assert.include(env, "LC_ALL=C")
      assert.include(env, "PRBOX_PROBE=yes")
      assert.include(env, `HOME=${process.env.HOME}`)
    })
  )

  it.effect("returns a failing command's exit code and stderr, and streams its final lines", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      gitSync(cwd, "init", "--quiet")
      const lines: Array<string> = []
      const output = yield* run(["-c", "alias.noisy=!printf 'step 1\\rstep 2\\nlast\\n' >&2; exit 3", "noisy"], {
        cwd,
        timeoutMs: 10_000,
        onStderrLine: (line) => Effect.sync(() => void lines.push(line))
      })
      assert.strictEqual(output.exitCode, 3)
      assert.deepStrictEqual(lines, ["step 2", "last"])
      assert.strictEqual(output.stderr, "step 2\nlast")
      const missing = yield* run(["rev-parse", "--verify", "nope"], { cwd, timeoutMs: 10_000 })
      assert.strictEqual(missing.exitCode, 128)
      assert.include(missing.stderr, "fatal: Needed a single revision")
    })
  )

  it.effect("fails with GitCommandFailed when git cannot start in the directory", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const error = yield* run(["status"], { cwd: NodePath.join(cwd, "missing"), timeoutMs: 10_000 }).pipe(Effect.flip)
      assert.strictEqual(error._tag, "GitCommandFailed")
      if (error._tag === "GitCommandFailed") assert.isNull(error.exitCode)
    })
  )

  it.live("stops git and its helpers at the timeout", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const closed = yield* Deferred.make<void>()
      // A server that accepts and never answers: git would wait forever.
      const sockets = new Set<Net.Socket>()
      const server = yield* Effect.acquireRelease(
        Effect.callback<Net.Server>((resume) => {
          const server = Net.createServer((socket) => {
            sockets.add(socket)
            // Reading lets the socket see the peer's end.
            socket.resume()
            socket.on("close", () => Deferred.doneUnsafe(closed, Effect.void))
          })
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.callback<void>((resume) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => resume(Effect.void))
          })
      )
      const { port } = server.address() as Net.AddressInfo
      const error = yield* run(["ls-remote", `http://127.0.0.1:${port}/x.git`], { cwd, timeoutMs: 500 }).pipe(
        Effect.flip
      )
      assert.strictEqual(error._tag, "GitTimeout")
      assert.include(error.message, "did not finish within 500 ms")
      // The connection closes because git-remote-http was killed with git.
      yield* Deferred.await(closed).pipe(Effect.timeout("10 seconds"))
    })
  )
})

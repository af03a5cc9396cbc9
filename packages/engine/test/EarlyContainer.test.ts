import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Git, GitCommandFailed } from "@prbox/git"
import { Deferred, Effect } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, inspectContainer, rowOf, withEngine } from "./harness.ts"

/**
 * An environment that needs nothing from the workspace's files (an image)
 * gets its container, started, while the checkout writes them: the checkout
 * is held here until the container has started, which only that order lets
 * finish. What needs the files (the setup) still waits for the checkout.
 */
describe("the container is made and started while the checkout runs", () => {
  it.live(
    "a sandbox of an image: its container started during the checkout, its setup run once on the whole checkout",
    () =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        // What the setup reads is the checkout's: run before it ended, it would find no pr1.txt.
        const setupCommands = ["cat pr1.txt >> setup-saw.txt"]
        return yield* withEngine(
          {
            config: { setupCommands },
            git: (real) =>
              Git.of({
                run: (args, options) =>
                  args.includes("checkout")
                    ? Deferred.await(started).pipe(
                        bounded("the checkout waited for a container started only after it"),
                        Effect.andThen(real.run(args, options))
                      )
                    : real.run(args, options)
              }),
            runtime: (real) => ({
              ...real,
              start: (containerId) =>
                real.start(containerId).pipe(Effect.tap(() => Deferred.succeed(started, undefined)))
            })
          },
          ({ remote }) =>
            Effect.gen(function* () {
              const sandboxes = yield* SandboxService
              const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
              yield* sandboxes.awaitIdle(opened.id)
              const row = yield* rowOf(opened.id)
              assert.strictEqual(row.status, "running", row.error ?? "")
              assert.strictEqual(row.sourceCommit, remote.pr1)
              assert.isNull(row.setupError)
              const workspace = row.workspacePath ?? ""
              // The whole checkout is there, and the create-time setup ran once, on it.
              assert.strictEqual(readFileSync(join(workspace, "pr1.txt"), "utf8"), "pr1.txt\n")
              assert.strictEqual(readFileSync(join(workspace, "setup-saw.txt"), "utf8"), "pr1.txt\n")
            })
        )
      })
  )

  it.live("a checkout that fails after the container started: the row is in error and its container stopped", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      return yield* withEngine(
        {
          git: (real) =>
            Git.of({
              run: (args, options) =>
                args.includes("checkout")
                  ? Deferred.await(started).pipe(
                      bounded("the checkout waited for a container started only after it"),
                      Effect.andThen(
                        Effect.fail(new GitCommandFailed({ operation: "checkout", exitCode: 128, detail: "disk full" }))
                      )
                    )
                  : real.run(args, options)
            }),
          runtime: (real) => ({
            ...real,
            start: (containerId) => real.start(containerId).pipe(Effect.tap(() => Deferred.succeed(started, undefined)))
          })
        },
        ({ remote }) =>
          Effect.gen(function* () {
            const sandboxes = yield* SandboxService
            const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
            yield* sandboxes.awaitIdle(opened.id)
            const row = yield* rowOf(opened.id)
            assert.strictEqual(row.status, "error")
            assert.include(row.error ?? "", "disk full")
            // The row says error: no code-server keeps running on a half-written workspace.
            assert.isNotNull(row.containerId)
            assert.isFalse(inspectContainer(row.containerId ?? "").State.Running)
          })
      )
    })
  )
})

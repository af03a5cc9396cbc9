import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Git, GitCommandFailed, type GitOutput, type GitTimeout } from "@prbox/git"
import { Deferred, Effect } from "effect"
import { bounded, type EngineOptions, inspectContainer, openRunning, openSettled, withEngine } from "./harness.ts"

/**
 * Engine options that hold every `git checkout` until a container has
 * started, then run `checkout` (the real one, or a failure) in its place.
 */
const checkoutAfterStart = (
  started: Deferred.Deferred<void>,
  checkout: (
    real: Effect.Effect<GitOutput, GitCommandFailed | GitTimeout>
  ) => Effect.Effect<GitOutput, GitCommandFailed | GitTimeout>
): Pick<EngineOptions, "git" | "runtime"> => ({
  git: (real) =>
    Git.of({
      run: (args, options) =>
        args.includes("checkout")
          ? Deferred.await(started).pipe(
              bounded("the checkout waited for a container started only after it"),
              Effect.andThen(checkout(real.run(args, options)))
            )
          : real.run(args, options)
    }),
  runtime: (real) => ({
    ...real,
    start: (containerId) => real.start(containerId).pipe(Effect.tap(() => Deferred.succeed(started, undefined)))
  })
})

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
          { config: { setupCommands }, ...checkoutAfterStart(started, (real) => real) },
          ({ remote }) =>
            Effect.gen(function* () {
              const row = yield* openRunning(remote.path, 1)
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
      const diskFull = new GitCommandFailed({ operation: "checkout", exitCode: 128, detail: "disk full" })
      return yield* withEngine(
        checkoutAfterStart(started, () => Effect.fail(diskFull)),
        ({ remote }) =>
          Effect.gen(function* () {
            const row = yield* openSettled(remote.path, 1)
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

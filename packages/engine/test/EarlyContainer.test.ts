import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Git } from "@prbox/git"
import { Deferred, Effect } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, rowOf, withEngine } from "./harness.ts"

/**
 * An environment that needs nothing from the workspace's files (an image)
 * gets its container while the checkout writes them: the checkout is held
 * here until the container exists, which only that order lets finish.
 */
describe("the container is made while the checkout runs", () => {
  it.live("a sandbox of an image: its container made during the checkout, then started, its setup run once", () =>
    Effect.gen(function* () {
      const made = yield* Deferred.make<void>()
      const setupCommands = ["echo ran >> setup-ran.txt"]
      return yield* withEngine(
        {
          config: { setupCommands },
          git: (real) =>
            Git.of({
              run: (args, options) =>
                args.includes("checkout")
                  ? Deferred.await(made).pipe(
                      bounded("the checkout waited for a container made only after it"),
                      Effect.andThen(real.run(args, options))
                    )
                  : real.run(args, options)
            }),
          runtime: (real) => ({
            ...real,
            provision: (spec, onProgress) =>
              real.provision(spec, onProgress).pipe(Effect.tap(() => Deferred.succeed(made, undefined)))
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
            assert.strictEqual(readFileSync(join(workspace, "setup-ran.txt"), "utf8"), "ran\n")
          })
      )
    })
  )
})

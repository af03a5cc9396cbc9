import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Git } from "@prbox/git"
import { Effect, Ref } from "effect"
import type { ContainerRuntimeShape } from "../src/ContainerRuntime.ts"
import { healthzGitImage } from "./git-image.ts"
import { type EngineOptions, inspectContainer, openRunning, openSettled, withEngine } from "./harness.ts"

/** What happened, in order: the host's workspace clone and checkout, container starts, and checkouts in a container. */
type Step = "host checkout" | "host clone" | "start" | "checkout in the sandbox"

/**
 * Engine options that record the order of the steps above; `inSandbox`
 * stands in for the container's checkout when given (a failure).
 */
const recording = (
  steps: Ref.Ref<ReadonlyArray<Step>>,
  inSandbox?: ContainerRuntimeShape["exec"]
): Pick<EngineOptions, "git" | "runtime"> => {
  const record = (step: Step) => Ref.update(steps, (done) => [...done, step])
  return {
    git: (real) =>
      Git.of({
        run: (args, options) =>
          Effect.andThen(
            args.includes("checkout")
              ? record("host checkout")
              : args.includes("--no-checkout")
                ? record("host clone")
                : Effect.void,
            real.run(args, options)
          )
      }),
    runtime: (real) => ({
      ...real,
      start: (containerId) => real.start(containerId).pipe(Effect.tap(() => record("start"))),
      exec: (containerId, command, options) =>
        command.includes("checkout")
          ? Effect.andThen(record("checkout in the sandbox"), (inSandbox ?? real.exec)(containerId, command, options))
          : real.exec(containerId, command, options)
    })
  }
}

/**
 * Once a container of a sandbox may run, no host program touches its
 * workspace: a sandbox of an image gets its clone (`.git`) on the host,
 * then its container starts (code-server's start is most of an open) and
 * the container's own git, as the sandbox user, writes the files while
 * code-server starts. What needs the files (the setup) waits for them.
 */
describe("the container is started before its files are written, which its own git writes", () => {
  it.live(
    "a sandbox of an image with git: the host clones, the container starts, its git checks out; setup ran once on it",
    () =>
      Effect.gen(function* () {
        const steps = yield* Ref.make<ReadonlyArray<Step>>([])
        // What the setup reads is the checkout's: run before it ended, it would find no pr1.txt.
        const setupCommands = ["cat pr1.txt >> setup-saw.txt"]
        return yield* withEngine(
          { config: { setupCommands, image: healthzGitImage() }, ...recording(steps) },
          ({ remote }) =>
            Effect.gen(function* () {
              const row = yield* openRunning(remote.path, 1)
              assert.strictEqual(row.sourceCommit, remote.pr1)
              assert.isNull(row.setupError)
              const workspace = row.workspacePath ?? ""
              assert.strictEqual(readFileSync(join(workspace, "pr1.txt"), "utf8"), "pr1.txt\n")
              assert.strictEqual(readFileSync(join(workspace, "setup-saw.txt"), "utf8"), "pr1.txt\n")
              // The host made the clone before the container started, and never checked out.
              const order = yield* Ref.get(steps)
              assert.deepStrictEqual(order, ["host clone", "start", "checkout in the sandbox"])
            })
        )
      })
  )

  it.live("a checkout that fails in the container: the row is in error and its container stopped", () =>
    Effect.gen(function* () {
      const steps = yield* Ref.make<ReadonlyArray<Step>>([])
      const diskFull: ContainerRuntimeShape["exec"] = () =>
        Effect.succeed({
          exitCode: 128,
          stdout: "",
          stderr: "fatal: disk full\n",
          truncated: false,
          timedOut: false,
          durationMs: 1
        })
      return yield* withEngine({ config: { image: healthzGitImage() }, ...recording(steps, diskFull) }, ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openSettled(remote.path, 1)
          assert.strictEqual(row.status, "error")
          assert.include(row.error ?? "", "disk full")
          // The row says error: no code-server keeps running on a half-written workspace.
          assert.isNotNull(row.containerId)
          assert.isFalse(inspectContainer(row.containerId ?? "").State.Running)
          assert.notInclude(yield* Ref.get(steps), "host checkout")
        })
      )
    })
  )

  it.live("an image without git: the host checks the files out before any container of the sandbox starts", () =>
    Effect.gen(function* () {
      const steps = yield* Ref.make<ReadonlyArray<Step>>([])
      return yield* withEngine(recording(steps), ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openRunning(remote.path, 1)
          assert.strictEqual(readFileSync(join(row.workspacePath ?? "", "pr1.txt"), "utf8"), "pr1.txt\n")
          // The clone made for the container is checked out by the host before the container first starts.
          const order = yield* Ref.get(steps)
          assert.deepStrictEqual(order, ["host clone", "host checkout", "start"])
        })
      )
    })
  )
})

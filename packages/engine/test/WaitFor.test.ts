import { assert, describe, it } from "@effect/vitest"
import type { Sandbox, SandboxId } from "@prbox/domain"
import { Effect, Schedule } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { bounded, rowOf, withEngine } from "./harness.ts"
import { inContainer } from "./user-image.ts"

/**
 * `waitFor` on a real engine: the sandbox is `running` (the open's answer)
 * once the named step is done; later steps go on in the background, their
 * outcome the row's `setupError`. A step held on a latch file (created by
 * the test with `docker exec`) shows which side of readiness it ran on.
 */
const base = DefaultImage.DEFAULT_IMAGE

/** A command that waits for the test's latch, then leaves `marker`. */
const held = (marker: string, exit = 0) =>
  `touch /tmp/${marker}.started; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo done > /tmp/${marker}; exit ${exit}`

const release = (row: Sandbox) => inContainer(row.containerId ?? "", "touch /tmp/go")

/** Polls the row until `ready` holds: a wait on a condition, bounded. */
const until = (id: SandboxId, what: string, ready: (row: Sandbox) => boolean) =>
  rowOf(id).pipe(
    Effect.flatMap((row) => (ready(row) ? Effect.succeed(row) : Effect.fail("not yet"))),
    Effect.retry(Schedule.spaced("100 millis")),
    bounded(what, 60),
    Effect.orDie
  )

/** Whether the container has `path`; a container not started yet has nothing. */
const hasFile = (row: Sandbox, path: string): boolean => {
  if (row.containerId === null) return false
  try {
    return inContainer(row.containerId, `test -e ${path} && echo yes || echo no`) === "yes"
  } catch {
    return false
  }
}

const open = (remote: string, pr: number, config: Record<string, unknown>) =>
  Effect.gen(function* () {
    pushPullRequest(remote, pr, { ".devcontainer/devcontainer.json": JSON.stringify({ image: base, ...config }) })
    return yield* SandboxService.use((sandboxes) => sandboxes.open({ input: remote, pr }))
  })

describe("waitFor", () => {
  it.live(
    "the default (updateContentCommand): running before postCreateCommand ends, which then records its outcome",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          const opened = yield* open(remote.path, 1, {
            updateContentCommand: "echo content > /tmp/content",
            postCreateCommand: held("post"),
            postStartCommand: "echo start > /tmp/start"
          })
          const running = yield* until(opened.id, "running", (row) => row.status === "running")
          assert.isTrue(hasFile(running, "/tmp/content"), "updateContentCommand had not run when the sandbox was ready")
          assert.isFalse(hasFile(running, "/tmp/post"), "postCreateCommand was waited for")
          assert.isNull(running.setupError)
          release(running)
          yield* SandboxService.use((sandboxes) => sandboxes.awaitIdle(opened.id))
          const done = yield* rowOf(opened.id)
          assert.strictEqual(done.status, "running")
          assert.isNull(done.setupError)
          assert.isTrue(hasFile(done, "/tmp/post") && hasFile(done, "/tmp/start"))
          assert.match(done.detail ?? "", /^ready at /)
        })
      )
  )

  it.live("a step past waitFor that fails is the row's setupError; the sandbox runs", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const opened = yield* open(remote.path, 2, { postCreateCommand: held("post", 3) })
        const running = yield* until(opened.id, "running", (row) => row.status === "running")
        release(running)
        yield* SandboxService.use((sandboxes) => sandboxes.awaitIdle(opened.id))
        const done = yield* rowOf(opened.id)
        assert.strictEqual(done.status, "running")
        assert.match(done.setupError ?? "", /postCreateCommand failed with exit code 3/)
      })
    )
  )

  it.live("waitFor postCreateCommand: not running until postCreateCommand is done", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const opened = yield* open(remote.path, 3, { waitFor: "postCreateCommand", postCreateCommand: held("post") })
        // The step has begun (its own mark) and cannot end before the latch: the row must not be running.
        const started = yield* until(opened.id, "postCreateCommand started", (row) => hasFile(row, "/tmp/post.started"))
        assert.strictEqual((yield* rowOf(opened.id)).status, "starting")
        release(started)
        yield* SandboxService.use((sandboxes) => sandboxes.awaitIdle(opened.id))
        const done = yield* rowOf(opened.id)
        assert.strictEqual(done.status, "running")
        assert.isTrue(hasFile(done, "/tmp/post"))
      })
    )
  )

  it.live(
    "a stop during the background steps wins; the row says the setup did not finish",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          const opened = yield* open(remote.path, 4, { postCreateCommand: held("post") })
          yield* until(
            opened.id,
            "postCreateCommand started",
            (row) => row.status === "running" && hasFile(row, "/tmp/post.started")
          )
          const stopped = yield* SandboxService.use((sandboxes) => sandboxes.stop(opened.id)).pipe(bounded("stop", 60))
          assert.strictEqual(stopped.status, "stopped")
          assert.strictEqual(stopped.setupError, "setup did not finish (interrupted)")
        })
      ),
    120_000
  )
})

import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { PrebuildRepo } from "@prbox/store"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { MakePrebuild, WarmPool } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { logLines, openRunning, withEngine } from "./harness.ts"
import { logOf, poolConfig } from "./pool-support.ts"
import { gitIn, removePrebuildsOf } from "./prebuild-support.ts"

const read = (row: Sandbox, file: string) => readFileSync(join(row.workspacePath ?? "", file), "utf8")

// A repository with no devcontainer.json and no create-time steps: most repositories.
describe("the warm pool of an environment without create-time steps", () => {
  it.live(
    "its base is prebuilt after a first open, the pool filled after the next, and a third open claims a pool container holding its PR's head",
    () =>
      withEngine({ config: { ...poolConfig(1), image: healthzGitImage() } }, ({ home, remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 3, { "three.txt": "3" })
          yield* openRunning(remote.path, 3)
          yield* (yield* MakePrebuild).settled
          const [prebuild] = yield* (yield* PrebuildRepo).list
          assert.strictEqual(prebuild?.state, "ready", "the base is prebuilt though it has no steps to run")
          pushPullRequest(remote.path, 4, { "four.txt": "4" })
          assert.include(yield* logOf(yield* openRunning(remote.path, 4)), "from prebuild")
          const pool = yield* WarmPool
          yield* pool.settled
          const waiting = yield* pool.list
          assert.deepStrictEqual(
            waiting.map((entry) => entry.state),
            ["ready"]
          )
          const head = pushPullRequest(remote.path, 1, { "pr.txt": "one" })
          const one = yield* openRunning(remote.path, 1)
          assert.strictEqual(one.id, waiting[0]?.id, "the sandbox is the pool container")
          assert.include(yield* logOf(one), "from the warm pool")
          assert.strictEqual(gitIn(one, "rev-parse", "HEAD"), head)
          assert.strictEqual(read(one, "pr.txt"), "one")
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    300_000
  )

  it.live(
    "with the pool off, such an environment gets no prebuild: today's path, nothing made",
    () =>
      withEngine({ config: { ...poolConfig(0), image: healthzGitImage() } }, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 3, { "three.txt": "3" })
          const row = yield* openRunning(remote.path, 3)
          assert.notInclude((yield* logLines(row.id)).join("\n"), "prebuild")
          yield* (yield* MakePrebuild).settled
          assert.lengthOf(yield* (yield* PrebuildRepo).list, 0)
        })
      ),
    300_000
  )
})

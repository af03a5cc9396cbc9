import { assert, describe, it } from "@effect/vitest"
import type { PullRequestLookup } from "@prbox/domain"
import { PullRequests } from "@prbox/git"
import { PrebuildRepo } from "@prbox/store"
import { Effect } from "effect"
import { gitSync, pushPullRequest } from "../../git/test/helpers.ts"
import { MakePrebuild, SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { logLines, openRunning, rowOf, withEngine } from "./harness.ts"
import { prebuiltBase, removePrebuildsOf } from "./prebuild-support.ts"

const devcontainer = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ image: healthzGitImage(), onCreateCommand: "mkdir -p deps", ...extra })

/** The hosting service's answer for a PR into `baseRef` (its API is unreachable here: a stand-in). */
const into = (baseRef: string): PullRequestLookup => ({
  _tag: "Known",
  info: {
    title: "t",
    author: "a",
    state: "open",
    sourceBranch: "s",
    sourceCloneUrl: null,
    baseRef,
    headSha: "0".repeat(40)
  }
})

describe("an open's base, with prebuilds", () => {
  it.live(
    "a PR into a branch that is not the default is judged against that branch, not the default read beside its fetch; the prebuild started after it is said under its running status, its detail kept (fake hosting service)",
    () => {
      const answers = new Map<number, PullRequestLookup>()
      const pullRequests = PullRequests.layerStatic(
        (at) => answers.get(at.pullRequest) ?? { _tag: "Unknown", reason: "not in the stand-in's answers" }
      )
      return withEngine({ config: { prebuilds: { maxGiB: 10, keepDays: 7 } }, pullRequests }, ({ home, remote }) =>
        Effect.gen(function* () {
          // main's environment prebuilt (the repository has a prebuild: the default base is read beside each fetch).
          yield* prebuiltBase(remote.path, devcontainer())
          assert.strictEqual((yield* (yield* PrebuildRepo).list)[0]?.state, "ready")
          // develop has another environment; PR 4 goes into develop and keeps its environment.
          const develop = pushPullRequest(remote.path, 91, {
            ".devcontainer/devcontainer.json": devcontainer({ containerEnv: { BRANCH: "develop" } })
          })
          gitSync(remote.path, "update-ref", "refs/heads/develop", develop)
          pushPullRequest(remote.path, 4, { "four.txt": "4" }, "develop")
          answers.set(4, into("develop"))

          const row = yield* openRunning(remote.path, 4)
          yield* (yield* MakePrebuild).settled
          const log = (yield* logLines(row.id)).join("\n")
          // Judged against main, it would be a PR that changes its environment.
          assert.include(log, "full path: no prebuild of this environment is ready yet")
          assert.notInclude(log, "changes its environment")
          const started = `prebuild of develop at ${develop.slice(0, 7)} started in the background`
          assert.include(log, started)
          // Said once the sandbox is ready: under its status then, and its detail (its address) kept.
          const events = yield* (yield* SandboxService).logs(row.id, { limit: 1000 })
          const said = events.find((event) => event._tag === "Progress" && event.line === started)
          assert.strictEqual(said?.status, "running")
          assert.notInclude((yield* rowOf(row.id)).detail ?? "", "prebuild")
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      )
    }
  )
})

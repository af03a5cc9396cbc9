import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent, type PullRequestInfo, type PullRequestLookup, type PullRequestState } from "@prbox/domain"
import { PullRequests } from "@prbox/git"
import { SandboxRepo } from "@prbox/store"
import { Clock, Effect, Layer, Option } from "effect"
import { gitSync, pushPullRequest } from "../../git/test/helpers.ts"
import { Gc, SandboxService } from "../src/index.ts"
import { bounded, later, openRunning, rowOf, withEngine } from "./harness.ts"

const MINUTE = 60_000
const HOUR = 60 * MINUTE

const info = (state: PullRequestState, overrides: Partial<PullRequestInfo> = {}): PullRequestInfo => ({
  title: "Fix the widget",
  author: "octocat",
  state,
  sourceBranch: "fix-widget",
  sourceCloneUrl: null,
  baseRef: "main",
  headSha: "0".repeat(40),
  ...overrides
})

const known = (state: PullRequestState, overrides: Partial<PullRequestInfo> = {}): PullRequestLookup => ({
  _tag: "Known",
  info: info(state, overrides)
})

/** A stand-in for the hosting service (its API is unreachable here): answers per PR number, changeable. */
const fakeService = (answers: Map<number, PullRequestLookup>) =>
  PullRequests.layerStatic(
    (at) => answers.get(at.pullRequest) ?? { _tag: "Unknown", reason: "not in the fake service's answers" }
  )

const logLines = (id: Parameters<SandboxService["Service"]["logs"]>[0]) =>
  Effect.flatMap(SandboxService, (sandboxes) => sandboxes.logs(id, { limit: 1_000 })).pipe(
    Effect.map((events) => events.map(describeEvent))
  )

describe("open asks the hosting service", () => {
  it.live("records the title, author, state, base and source branch (fake hosting service)", () => {
    const answers = new Map([[1, known("open")]])
    return withEngine({ pullRequests: fakeService(answers) }, ({ remote }) =>
      Effect.gen(function* () {
        const row = yield* openRunning(remote.path, 1)
        assert.deepStrictEqual(
          [row.title, row.author, row.pullRequestState, row.baseRef, row.closedSeenAt, row.sourceBranch],
          ["Fix the widget", "octocat", "open", "main", null, "fix-widget"]
        )
        assert.strictEqual(row.sourceCommit, remote.pr1)
      })
    )
  })

  it.live(
    "a 404 from the service while git has the ref: opened with a warning, metadata unknown (fake hosting service)",
    () => {
      const answers = new Map<number, PullRequestLookup>([[1, { _tag: "Missing", detail: "Not Found" }]])
      return withEngine({ pullRequests: fakeService(answers) }, ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openRunning(remote.path, 1)
          assert.deepStrictEqual([row.title, row.pullRequestState, row.sourceBranch], [null, null, "pr-1"])
          const lines = yield* logLines(row.id)
          assert.isTrue(
            lines.some((line) =>
              line.includes("the hosting service says no such pull request; opened from the git ref")
            ),
            lines.join("\n")
          )
        })
      )
    }
  )

  it.live(
    "a 404 from the service and no ref: the open fails with the service's answer, no row (fake hosting service)",
    () => {
      const answers = new Map<number, PullRequestLookup>([[9, { _tag: "Missing", detail: "Pull request 9 not found" }]])
      return withEngine({ pullRequests: fakeService(answers) }, ({ remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const error = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 9 }))
          assert.strictEqual(error._tag, "PullRequestMissing")
          assert.include(error.message, "Pull request 9 not found")
          assert.deepStrictEqual(yield* sandboxes.listAll, [])
        })
      )
    }
  )

  it.live(
    "a service that never answers holds no open: metadata unknown, and for a plain git remote (no hosting service) nothing is logged (fake hosting service)",
    () =>
      withEngine(
        { pullRequests: Layer.succeed(PullRequests, PullRequests.of({ lookup: () => Effect.never })) },
        ({ remote }) =>
          Effect.gen(function* () {
            const row = yield* openRunning(remote.path, 1).pipe(bounded("the open waited on the service"))
            assert.deepStrictEqual([row.title, row.pullRequestState], [null, null])
            const lines = yield* logLines(row.id)
            assert.isFalse(
              lines.some((line) => line.includes("pull request details unknown")),
              lines.join("\n")
            )
          })
      )
  )
})

/**
 * Bitbucket Cloud publishes no PR refs: its URL alone is opened from the
 * source branch the service names, fetched from a local bare repository
 * standing in for bitbucket.org (git's `url.<base>.insteadOf`, in a global
 * config restored when the test ends).
 */
const bitbucketRemote = (home: string, bare: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = process.env.GIT_CONFIG_GLOBAL
      const gitconfig = join(home, "bitbucket.gitconfig")
      writeFileSync(gitconfig, `[url "${bare}"]\n\tinsteadOf = https://bitbucket.org/w/r.git\n`)
      process.env.GIT_CONFIG_GLOBAL = gitconfig
      return saved
    }),
    (saved) =>
      Effect.sync(() => {
        if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL
        else process.env.GIT_CONFIG_GLOBAL = saved
      })
  )

const BITBUCKET_PR = "https://bitbucket.org/w/r/pull-requests/5"

describe("Bitbucket Cloud by URL alone", () => {
  it.live("fetches the source branch the service names and checks its head (fake hosting service)", () => {
    const answers = new Map<number, PullRequestLookup>()
    return withEngine({ pullRequests: fakeService(answers) }, ({ remote, home }) =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* bitbucketRemote(home, remote.path)
          gitSync(home, "--git-dir", remote.path, "update-ref", "refs/heads/feature", remote.pr1)
          const sandboxes = yield* SandboxService

          // The branch moved since the service looked: refused, never silently used.
          answers.set(5, known("open", { sourceBranch: "feature", headSha: remote.pr2.slice(0, 12) }))
          const moved = yield* Effect.flip(sandboxes.open({ input: BITBUCKET_PR }))
          assert.strictEqual(moved._tag, "GitFailed")
          assert.include(
            moved.message,
            `the source branch moved: the service reports ${remote.pr2.slice(0, 12)} but feature is at ${remote.pr1.slice(0, 12)}`
          )

          answers.set(5, { _tag: "Unknown", reason: "no credentials", configure: "set BITBUCKET_API_TOKEN" })
          const unknown = yield* Effect.flip(sandboxes.open({ input: BITBUCKET_PR }))
          assert.strictEqual(unknown._tag, "PullRequestUnresolved")
          assert.include(unknown.message, "set BITBUCKET_API_TOKEN")
          assert.include(unknown.message, "--ref <source branch>")

          answers.set(5, { _tag: "Missing", detail: "There is no pull request with id 5" })
          const missing = yield* Effect.flip(sandboxes.open({ input: BITBUCKET_PR }))
          assert.strictEqual(missing._tag, "PullRequestMissing")
          assert.include(missing.message, "There is no pull request with id 5")
          assert.deepStrictEqual(yield* sandboxes.listAll, [])

          // Bitbucket reports 12 characters of the head: compared as a prefix.
          answers.set(5, known("open", { sourceBranch: "feature", headSha: remote.pr1.slice(0, 12) }))
          const opened = yield* sandboxes.open({ input: BITBUCKET_PR })
          yield* sandboxes.awaitIdle(opened.id).pipe(bounded("the create did not finish", 60))
          const row = yield* rowOf(opened.id)
          assert.strictEqual(row.status, "running", row.error ?? "")
          assert.deepStrictEqual(
            [row.provider, row.host, row.repository, row.pullRequest],
            ["bitbucket", "bitbucket.org", "w/r", 5]
          )
          assert.deepStrictEqual(
            [row.sourceCommit, row.sourceBranch, row.title],
            [remote.pr1, "feature", "Fix the widget"]
          )
        })
      )
    )
  })
})

const writeHeartbeat = (containerId: string, at: number) =>
  execFileSync("docker", ["exec", containerId, "sh", "-c", `echo ${at} > /tmp/prbox-heartbeat`])

describe("gc with deleteWhenClosed", () => {
  it.live(
    "deletes a merged PR's sandbox after the grace, never while in use, never on an unknown state (fake hosting service)",
    () => {
      const answers = new Map<number, PullRequestLookup>([
        [1, known("open")],
        [2, { _tag: "Unknown", reason: "rate limited; retry after 60 s" }],
        [3, known("open")]
      ])
      return withEngine(
        { pullRequests: fakeService(answers), config: { deleteWhenClosed: true, closedGraceMinutes: 60 } },
        ({ remote }) =>
          Effect.gen(function* () {
            const gc = yield* Gc
            const sandboxes = yield* SandboxService
            pushPullRequest(remote.path, 3, { "pr3.txt": "3" })
            const ended = yield* openRunning(remote.path, 1)
            const unknown = yield* openRunning(remote.path, 2)
            const inUse = yield* openRunning(remote.path, 3)
            yield* sandboxes.stop(ended.id)
            yield* sandboxes.stop(unknown.id)
            answers.set(1, known("merged"))
            answers.set(3, known("closed"))

            // First seen merged now: within the grace, nothing is due.
            const now = yield* Clock.currentTimeMillis
            assert.deepStrictEqual(yield* gc.plan, { stop: [], remove: [] })
            const seen = yield* rowOf(ended.id)
            assert.deepStrictEqual([seen.pullRequestState, seen.closedSeenAt !== null], ["merged", true])

            // Past the grace: the ended one is due; the one in use (a fresh heartbeat) and the unknown one are not.
            writeHeartbeat(inUse.containerId ?? "", now + 2 * HOUR)
            const shown = yield* later(2 * HOUR, gc.plan)
            assert.deepStrictEqual(shown, { stop: [], remove: [ended.id] })

            // Reopened before the confirmed run: the fresh plan no longer has it.
            answers.set(1, known("open"))
            const revalidated = yield* later(2 * HOUR, gc.run(shown))
            assert.deepStrictEqual(revalidated.removed, [])
            assert.strictEqual((yield* rowOf(ended.id)).closedSeenAt, null)

            // Merged again, seen again, past the grace: deleted. The in-use one, now idle, is deleted instead of stopped.
            answers.set(1, known("merged"))
            yield* later(2 * HOUR, gc.plan)
            const due = yield* later(4 * HOUR, gc.plan)
            assert.deepStrictEqual(due, { stop: [], remove: [inUse.id, ended.id] })
            const report = yield* later(4 * HOUR, gc.run(due))
            assert.deepStrictEqual(report.removed, [inUse.id, ended.id])
            const repo = yield* SandboxRepo
            assert.isTrue(Option.isNone(yield* repo.findById(ended.id)))
            assert.isTrue(Option.isNone(yield* repo.findById(inUse.id)))
            assert.strictEqual((yield* rowOf(unknown.id)).status, "stopped")
          })
      )
    }
  )
})

import { execFileSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type PullRequestLookup, type SandboxId, statePaths } from "@prbox/domain"
import { type Git, PullRequests } from "@prbox/git"
import { Effect } from "effect"
import { gitSync } from "../../git/test/helpers.ts"
import { type PushOptions, SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { openRunning, rowOf, withEngine } from "./harness.ts"
import { hostGitConfig, shIn } from "./identity-fixtures.ts"

const bareGit = (bare: string, ...args: ReadonlyArray<string>) => gitSync(bare, `--git-dir=${bare}`, ...args)

/** Every mirror's objects: counts and pack files, to show a push adds none. */
const mirrorObjects = (home: string) => {
  const root = statePaths(home).mirrors
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((entry) => entry.endsWith(".git") && !entry.includes("/objects"))
    .map((mirror) => {
      const path = join(root, mirror)
      return [bareGit(path, "count-objects", "-v"), readdirSync(join(path, "objects", "pack")).sort()]
    })
}

const push = (id: SandboxId, options: PushOptions) => Effect.flatMap(SandboxService, (s) => s.push(id, options))

const refusal = (id: SandboxId, options: PushOptions) =>
  Effect.map(Effect.flip(push(id, options)), (error) => {
    assert.strictEqual(error._tag, "PushRefused", error.message)
    return error._tag === "PushRefused" ? error : assert.fail("not a refusal")
  })

const COMMIT = (file: string) => `echo ${file} > ${file} && git add ${file} && git commit -q -m "fix ${file}"`

/** A push (its `push` subcommand) starts only once someone else's commit is on the branch: a latch on the git call, no sleep. */
const racingPush =
  (other: () => void) =>
  (real: Git["Service"]): Git["Service"] => ({
    run: (args, options) =>
      Effect.suspend(() => {
        if (args.includes("push")) other()
        return real.run(args, options)
      })
  })

describe("prbox push from a sandbox (plain git remote, --to)", () => {
  let competing = (): void => undefined
  it.live("shows the commits, pushes them as the host's identity, leaves the mirror without a new object", () =>
    withEngine({ config: { image: healthzGitImage() } }, ({ remote, home }) =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostGitConfig(home)
          bareGit(remote.path, "update-ref", "refs/heads/feature", remote.pr1)
          const row = yield* openRunning(remote.path, 1)

          const none = yield* refusal(row.id, { confirm: true, to: "feature" })
          assert.strictEqual(none.kind, "no-new-commits")
          const nowhere = yield* refusal(row.id, { confirm: false })
          assert.strictEqual(nowhere.kind, "no-destination")
          assert.include(nowhere.reason, "--to <branch>")

          yield* shIn(row.id, `${COMMIT("a.txt")} && ${COMMIT("b.txt")}`)
          yield* shIn(row.id, "echo draft > draft.txt")
          const dirty = yield* refusal(row.id, { confirm: true, to: "feature" })
          assert.strictEqual(dirty.kind, "uncommitted-changes")
          assert.deepStrictEqual(dirty.changedFiles, ["draft.txt"])
          yield* shIn(row.id, "rm draft.txt")

          const before = mirrorObjects(home)
          const shown = yield* push(row.id, { confirm: false, to: "feature" })
          assert.isFalse(shown.pushed)
          assert.deepStrictEqual(
            shown.commits.map((c) => [c.subject, c.author, c.files]),
            [
              ["fix b.txt", "Host Person <host@prbox.invalid>", ["b.txt"]],
              ["fix a.txt", "Host Person <host@prbox.invalid>", ["a.txt"]]
            ]
          )
          assert.strictEqual(bareGit(remote.path, "rev-parse", "refs/heads/feature"), remote.pr1)

          const stale = yield* refusal(row.id, { confirm: true, to: "feature", expectTip: "f".repeat(40) })
          assert.strictEqual(stale.kind, "changed-since-shown")

          const pushed = yield* push(row.id, { confirm: true, to: "feature", expectTip: shown.tip })
          assert.isTrue(pushed.pushed)
          assert.strictEqual(bareGit(remote.path, "rev-parse", "refs/heads/feature"), shown.tip)
          assert.strictEqual(
            bareGit(remote.path, "log", "-1", "--format=%an <%ae>", "refs/heads/feature"),
            "Host Person <host@prbox.invalid>"
          )
          assert.deepStrictEqual(mirrorObjects(home), before)
          assert.deepStrictEqual(readdirSync(statePaths(home).pushes), [])
          // The row's head is the pushed tip: nothing new to push now.
          assert.strictEqual((yield* rowOf(row.id)).sourceCommit, shown.tip)
          assert.strictEqual((yield* refusal(row.id, { confirm: true, to: "feature" })).kind, "no-new-commits")
        })
      )
    )
  )

  it.live("refuses a history that is not a fast-forward, a PR that moved, a malformed object, a lease that fails", () =>
    withEngine({ config: { image: healthzGitImage() }, git: racingPush(() => competing()) }, ({ remote, home }) =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostGitConfig(home)
          bareGit(remote.path, "update-ref", "refs/heads/feature", remote.pr1)
          const row = yield* openRunning(remote.path, 1)
          const to = { to: "feature" }

          // A rebase onto main: the PR's head is no longer in the sandbox's history.
          yield* shIn(row.id, `git reset -q --hard ${remote.main} && ${COMMIT("rebased.txt")}`)
          assert.strictEqual((yield* refusal(row.id, { confirm: true, ...to })).kind, "not-fast-forward")
          yield* shIn(row.id, `git reset -q --hard ${remote.pr1}`)

          // A tree with a duplicate entry, written loose in the sandbox under a clean commit: the host's fsck refuses it.
          yield* shIn(
            row.id,
            'b=$(echo x | git hash-object -w --stdin) && perl -e \'print (("100644 a\\0" . pack("H*", $ARGV[0])) x 2)\' $b > /tmp/t && t=$(git hash-object -t tree -w --literally /tmp/t) && c=$(git commit-tree $t -p HEAD -m bad) && d=$(git commit-tree HEAD^{tree} -p $c -m fix) && git reset -q --soft $d'
          )
          const malformed = yield* refusal(row.id, { confirm: true, ...to })
          assert.strictEqual(malformed.kind, "malformed", malformed.reason)
          yield* shIn(row.id, `git reset -q --hard ${remote.pr1}`)

          // Someone pushes to the branch between prbox's checks and its push.
          yield* shIn(row.id, COMMIT("mine.txt"))
          const other = join(home, "other")
          gitSync(home, "clone", "--quiet", remote.path, other)
          gitSync(other, "checkout", "--quiet", "-b", "feature", remote.pr1)
          execFileSync("sh", ["-c", "echo theirs > theirs.txt"], { cwd: other })
          gitSync(other, "add", "theirs.txt")
          gitSync(other, "commit", "--quiet", "-m", "theirs")
          const theirs = gitSync(other, "rev-parse", "HEAD")
          competing = () => {
            competing = () => undefined
            gitSync(other, "push", "--quiet", "origin", "feature")
          }
          const lease = yield* refusal(row.id, { confirm: true, ...to })
          assert.strictEqual(lease.kind, "lease-failed")
          assert.strictEqual(bareGit(remote.path, "rev-parse", "refs/heads/feature"), theirs)
          assert.strictEqual((yield* rowOf(row.id)).sourceCommit, remote.pr1)

          // The PR's own ref moved meanwhile: update first.
          bareGit(remote.path, "update-ref", "refs/pull/1/head", theirs)
          const moved = yield* refusal(row.id, { confirm: false, ...to })
          assert.strictEqual(moved.kind, "pull-request-moved")
          assert.include(moved.reason, `prbox update ${row.id}`)
        })
      )
    )
  )
})

const GITHUB_PR = "https://github.com/o/r/pull/1"

const githubAnswer = (
  fork: string | null,
  maintainerCanModify: boolean | null,
  headSha: string
): PullRequestLookup => ({
  _tag: "Known",
  info: {
    title: "t",
    author: "a",
    state: "open",
    sourceBranch: "fix",
    sourceCloneUrl: fork,
    maintainerCanModify,
    baseRef: "main",
    headSha
  }
})

describe("prbox push to the branch the hosting service reports (fake hosting service)", () => {
  it.live("pushes a fork's PR to the fork's branch; refuses when the fork does not let maintainers push", () => {
    let answer: PullRequestLookup = { _tag: "Unknown", reason: "not yet" }
    return withEngine(
      { config: { image: healthzGitImage() }, pullRequests: PullRequests.layerStatic(() => answer) },
      ({ remote, home }) =>
        Effect.scoped(
          Effect.gen(function* () {
            // Bare repositories stand in for the base repository and the fork on the code host.
            const fork = join(home, "fork.git")
            gitSync(home, "clone", "--quiet", "--bare", remote.path, fork)
            bareGit(fork, "update-ref", "refs/heads/fix", remote.pr1)
            yield* hostGitConfig(home, [
              `[url "${remote.path}"]`,
              "\tinsteadOf = https://github.com/o/r.git",
              `[url "${fork}"]`,
              "\tinsteadOf = https://github.com/fork/r.git"
            ])
            answer = githubAnswer("https://github.com/fork/r.git", true, remote.pr1)
            const row = yield* openRunning(GITHUB_PR, 1)
            yield* shIn(row.id, COMMIT("fork-fix.txt"))

            answer = githubAnswer("https://github.com/fork/r.git", false, remote.pr1)
            const closed = yield* refusal(row.id, { confirm: true })
            assert.strictEqual(closed.kind, "no-destination")
            assert.include(closed.reason, "does not let maintainers push")

            answer = githubAnswer("https://github.com/fork/r.git", true, remote.pr1)
            const pushed = yield* push(row.id, { confirm: true })
            assert.isTrue(pushed.pushed)
            assert.deepStrictEqual([pushed.remote, pushed.branch], ["https://github.com/fork/r.git", "fix"])
            assert.strictEqual(bareGit(fork, "rev-parse", "refs/heads/fix"), pushed.tip)
            // The base repository's branches are untouched.
            assert.throws(() => bareGit(remote.path, "rev-parse", "--verify", "-q", "refs/heads/fix"))
          })
        )
    )
  })
})

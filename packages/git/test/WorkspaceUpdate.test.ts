import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { PullRequestNumber } from "@prbox/domain"
import { Effect, Layer, Result } from "effect"
import {
  Git,
  type GitCommandFailed,
  type GitTimeout,
  parsePullRequestRef,
  pullRequestRefOf,
  Workspaces
} from "../src/index.ts"
import { parsePorcelainZ, type WorkspaceSteps, workspaceSteps } from "../src/WorkspaceUpdate.ts"
import { gitSync, makeRemote, movePullRequest, type TestRemote, tempDir, testGit, workspacesLayer } from "./helpers.ts"

/** git in a workspace the sandbox's user owns. */
const inWs = (path: string, ...args: ReadonlyArray<string>): string =>
  gitSync(path, "-c", `safe.directory=${path}`, ...args)

/** A workspace of PR 1 at its current head, as the sandbox's user (uid 1000) owns it when the daemon is root. */
const workspaceOf = (root: string, remote: TestRemote) =>
  Effect.gen(function* () {
    const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 1 }))
    const fetched = yield* Workspaces.use((w) => w.fetchPullRequest(ref))
    const path = NodePath.join(root, "ws")
    yield* Workspaces.use((w) =>
      w.createWorkspace({
        mirrorPath: fetched.mirrorPath,
        commit: fetched.commit,
        destination: path,
        originUrl: remote.path,
        branchName: "pr-1"
      })
    )
    if (process.getuid?.() === 0) execFileSync("chown", ["-R", "1000:1000", path])
    return { path, ref, mirrorPath: fetched.mirrorPath }
  })

const run = <A, E>(root: string, body: Effect.Effect<A, E, Workspaces | Git>) =>
  body.pipe(Effect.provide(Layer.merge(workspacesLayer(NodePath.join(root, "state")), testGit())))

/**
 * The steps `update` runs, given this machine's git on a test workspace (in
 * the product they run in the sandbox's container, on its copy).
 */
const steps = <A, E>(use: (steps: WorkspaceSteps<GitCommandFailed | GitTimeout>) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const git = yield* Git
    return yield* use(workspaceSteps(git.run, 60_000))
  })

/** A commit of the mirror brought into the workspace as `update` brings it: a bundle of what it lacks. */
const bringCommit = (path: string, mirrorPath: string, commit: string, have: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const bundle = yield* Workspaces.use((w) => w.bundleCommit(mirrorPath, commit, have))
    const file = NodePath.join(NodePath.dirname(path), "update.bundle")
    writeFileSync(file, bundle)
    yield* steps((s) => s.succeed(path, ["bundle", "unbundle", file]))
  })

describe("a workspace's state", () => {
  it.effect("lists changed tracked files and untracked ones (in new directories too)", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const state = yield* run(
        root,
        Effect.gen(function* () {
          const { path } = yield* workspaceOf(root, remote)
          const clean = yield* steps((s) => s.workspaceState(path))
          assert.deepStrictEqual(clean, { head: remote.pr1, changedFiles: [] })
          writeFileSync(NodePath.join(path, "README.md"), "changed\n")
          execFileSync("mkdir", ["-p", NodePath.join(path, "new dir")])
          writeFileSync(NodePath.join(path, "new dir", "note.txt"), "new\n")
          return yield* steps((s) => s.workspaceState(path))
        })
      )
      assert.deepStrictEqual([...state.changedFiles].sort(), ["README.md", "new dir/note.txt"])
    })
  )

  it("reads renames as both paths", () => {
    assert.deepStrictEqual(parsePorcelainZ("R  new.txt\0old.txt\0 M a\0?? b c\0"), ["new.txt", "old.txt", "a", "b c"])
    assert.deepStrictEqual(parsePorcelainZ(""), [])
  })
})

describe("moving a workspace to the PR's new head", () => {
  it.effect("fast-forwards when the new head contains the old one", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const { path, next } = yield* run(
        root,
        Effect.gen(function* () {
          const { path, ref, mirrorPath } = yield* workspaceOf(root, remote)
          const next = movePullRequest(root, remote.pr1, "next.txt")
          const fetched = yield* Workspaces.use((w) => w.fetchPullRequest(ref))
          assert.strictEqual(fetched.commit, next)
          yield* bringCommit(path, mirrorPath, next, [remote.pr1])
          assert.isTrue(yield* steps((s) => s.isAncestor(path, remote.pr1, next)))
          assert.isFalse(yield* steps((s) => s.isAncestor(path, next, remote.pr1)))
          yield* steps((s) => s.fastForward(path, next))
          return { path, next }
        })
      )
      assert.strictEqual(inWs(path, "rev-parse", "HEAD"), next)
      assert.strictEqual(inWs(path, "symbolic-ref", "--short", "HEAD"), "pr-1")
      assert.strictEqual(readFileSync(NodePath.join(path, "next.txt"), "utf8"), "next.txt\n")
    })
  )

  it.effect("sees a local commit as not contained in the new head", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      yield* run(
        root,
        Effect.gen(function* () {
          const { path, ref, mirrorPath } = yield* workspaceOf(root, remote)
          const next = movePullRequest(root, remote.pr1, "next.txt")
          writeFileSync(NodePath.join(path, "mine.txt"), "mine\n")
          inWs(path, "add", "mine.txt")
          inWs(path, "commit", "--quiet", "-m", "mine")
          yield* Workspaces.use((w) => w.fetchPullRequest(ref))
          yield* bringCommit(path, mirrorPath, next, [remote.pr1])
          const state = yield* steps((s) => s.workspaceState(path))
          assert.deepStrictEqual(state.changedFiles, [])
          assert.isTrue(yield* steps((s) => s.isAncestor(path, remote.pr1, next)))
          assert.isFalse(yield* steps((s) => s.isAncestor(path, state.head, next)))
        })
      )
    })
  )

  it.effect("after a force-push, keeps the old head on prbox/before-update-1 and resets to the new one", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const { path, kept, rewritten } = yield* run(
        root,
        Effect.gen(function* () {
          const { path, ref, mirrorPath } = yield* workspaceOf(root, remote)
          const rewritten = movePullRequest(root, remote.main, "rewritten.txt")
          yield* Workspaces.use((w) => w.fetchPullRequest(ref))
          yield* bringCommit(path, mirrorPath, rewritten, [remote.pr1])
          assert.isFalse(yield* steps((s) => s.isAncestor(path, remote.pr1, rewritten)))
          assert.strictEqual(yield* steps((s) => s.nextKeepBranch(path)), "prbox/before-update-1")
          const kept = yield* steps((s) => s.keepAndReset(path, rewritten))
          return { path, kept, rewritten }
        })
      )
      assert.strictEqual(kept, "prbox/before-update-1")
      assert.strictEqual(inWs(path, "rev-parse", "refs/heads/prbox/before-update-1"), remote.pr1)
      assert.strictEqual(inWs(path, "rev-parse", "HEAD"), rewritten)
      assert.strictEqual(inWs(path, "symbolic-ref", "--short", "HEAD"), "pr-1")
      assert.strictEqual(inWs(path, "status", "--porcelain"), "")
    })
  )

  it.effect("numbers the kept branch past the ones that exist", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const { path, kept } = yield* run(
        root,
        Effect.gen(function* () {
          const { path, ref, mirrorPath } = yield* workspaceOf(root, remote)
          const rewritten = movePullRequest(root, remote.main, "rewritten.txt")
          inWs(path, "branch", "prbox/before-update-1", remote.main)
          inWs(path, "branch", "prbox/before-update-x", remote.main)
          yield* Workspaces.use((w) => w.fetchPullRequest(ref))
          yield* bringCommit(path, mirrorPath, rewritten, [remote.pr1])
          const kept = yield* steps((s) => s.keepAndReset(path, rewritten))
          return { path, kept }
        })
      )
      assert.strictEqual(kept, "prbox/before-update-2")
      assert.strictEqual(inWs(path, "rev-parse", "refs/heads/prbox/before-update-1"), remote.main)
      assert.strictEqual(inWs(path, "rev-parse", "refs/heads/prbox/before-update-2"), remote.pr1)
    })
  )

  it.effect("refuses a fast-forward that would overwrite an untracked file, and changes nothing", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const { path, error } = yield* run(
        root,
        Effect.gen(function* () {
          const { path, ref, mirrorPath } = yield* workspaceOf(root, remote)
          const next = movePullRequest(root, remote.pr1, "next.txt")
          writeFileSync(NodePath.join(path, "next.txt"), "mine\n")
          yield* Workspaces.use((w) => w.fetchPullRequest(ref))
          yield* bringCommit(path, mirrorPath, next, [remote.pr1])
          const error = yield* steps((s) => s.fastForward(path, next)).pipe(Effect.flip)
          return { path, error }
        })
      )
      assert.strictEqual(error._tag, "GitCommandFailed")
      assert.strictEqual(readFileSync(NodePath.join(path, "next.txt"), "utf8"), "mine\n")
      assert.strictEqual(inWs(path, "rev-parse", "HEAD"), remote.pr1)
    })
  )
})

describe("pullRequestRefOf", () => {
  const row = (provider: "github" | "gitlab" | "bitbucket" | "codecommit" | "git", host: string) => ({
    provider,
    host,
    repository: "o/r",
    pullRequest: PullRequestNumber.make(7)
  })
  const cases: ReadonlyArray<readonly [ReturnType<typeof row>, string | undefined]> = [
    [row("github", "github.com"), "refs/pull/7/head"],
    [row("gitlab", "gitlab.example.com"), "refs/merge-requests/7/head"],
    [row("bitbucket", "bitbucket.example.com"), "refs/pull-requests/7/from"],
    [row("bitbucket", "bitbucket.org"), undefined],
    [row("codecommit", "eu-west-1"), undefined],
    [row("git", "local"), "refs/changes/7"]
  ]
  for (const [input, headRef] of cases) {
    it(`${input.provider} at ${input.host}: ${headRef ?? "refused"}`, () => {
      const result = pullRequestRefOf(input, "https://example.com/o/r.git", "refs/changes/{n}")
      if (headRef === undefined) {
        assert.isTrue(Result.isFailure(result))
        return
      }
      const ref = Result.getOrThrow(result)
      assert.strictEqual(ref.headRef, headRef)
      assert.strictEqual(ref.remoteUrl, "https://example.com/o/r.git")
      assert.strictEqual(ref.repository, "o/r")
    })
  }
  it("refuses a pattern without {n}", () => {
    assert.isTrue(Result.isFailure(pullRequestRefOf(row("git", "local"), "/r.git", "refs/heads/main")))
  })
})

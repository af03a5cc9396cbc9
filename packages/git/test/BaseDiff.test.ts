import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { parsePullRequestRef, Workspaces } from "../src/index.ts"
import { gitSync, makeRemote, pushPullRequest, tempDir, testGit, workspacesLayer } from "./helpers.ts"

/** `main` moves on after the PR branched off (README.md removed): that must not show in the PR's diff. */
const advanceMain = (root: string): void => {
  const work = NodePath.join(root, "remote-work")
  gitSync(work, "checkout", "--quiet", "main")
  gitSync(work, "rm", "--quiet", "README.md")
  gitSync(work, "commit", "--quiet", "-m", "main drops README.md")
  gitSync(work, "push", "--quiet", NodePath.join(root, "remote.git"), "HEAD:refs/heads/main")
}

describe("Workspaces.diffAgainstBase", () => {
  it.effect("is the PR's own changes since its merge-base with the default branch, fetched once into the mirror", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const head = pushPullRequest(remote.path, 7, { "src/feature.ts": "export const x = 1\n", "docs/notes.md": "n\n" })
      advanceMain(root)
      const fetchedArgs: Array<ReadonlyArray<string>> = []
      const baseArgs: Array<ReadonlyArray<string>> = []
      const git = testGit((run) => (args, options) => {
        if (args.some((arg) => arg === "fetch" || arg === "ls-remote")) fetchedArgs.push(args)
        if (args.some((arg) => arg.startsWith("refs/prbox/base/"))) baseArgs.push(args)
        return run(args, options)
      })
      const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 7 }))
      yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const fetched = yield* workspaces.fetchPullRequest(ref)
        assert.strictEqual(workspaces.mirrorPath(ref), fetched.mirrorPath)

        const whole = yield* workspaces.diffAgainstBase(fetched.mirrorPath, head, { paths: [], stat: false })
        assert.strictEqual(whole.mergeBase, remote.main)
        assert.strictEqual(whole.baseBranch, "main")
        assert.include(whole.diff, "+++ b/src/feature.ts")
        assert.include(whole.diff, "+++ b/docs/notes.md")
        assert.notInclude(whole.diff, "README.md", "main's later commit is not the PR's change")
        assert.deepStrictEqual(whole.files, [
          { path: "docs/notes.md", change: "added" },
          { path: "src/feature.ts", change: "added" }
        ])

        const fetches = fetchedArgs.length
        const baseReads = baseArgs.length
        const onlySrc = yield* workspaces.diffAgainstBase(fetched.mirrorPath, head, { paths: ["src"], stat: true })
        assert.match(onlySrc.diff, /src\/feature\.ts \| 1 \+/)
        assert.notInclude(onlySrc.diff, "docs/notes.md")
        assert.deepStrictEqual(
          onlySrc.files,
          [{ path: "src/feature.ts", change: "added" }],
          "the paths bound the files"
        )
        assert.strictEqual(fetchedArgs.length, fetches, "the base branch is in the mirror now: no second fetch")
        // Asked on every open: the default base and its tip in one read, and nothing written.
        assert.deepStrictEqual(
          baseArgs.slice(baseReads).map((args) => args.find((arg) => !arg.startsWith("-"))),
          ["for-each-ref"]
        )

        const named = yield* Effect.flip(
          workspaces.diffAgainstBase(fetched.mirrorPath, head, { base: "no-such-branch", paths: [], stat: false })
        )
        assert.strictEqual(named._tag, "GitCommandFailed")
        const unsafe = yield* Effect.flip(
          workspaces.diffAgainstBase(fetched.mirrorPath, head, { base: "a..b", paths: [], stat: false })
        )
        assert.strictEqual(unsafe._tag, "UnsafeArgument")
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"), git)))
    })
  )

  it.effect("reads the base in one git run; a tip that is no commit or a base that is gone goes the locked way", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      pushPullRequest(remote.path, 7, { "src/feature.ts": "export const x = 1\n" })
      const runs: Array<string> = []
      const git = testGit((run) => (args, options) => {
        runs.push(args.find((arg) => !arg.startsWith("-")) ?? "")
        return run(args, options)
      })
      const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 7 }))
      yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const { mirrorPath } = yield* workspaces.fetchPullRequest(ref)
        const first = yield* workspaces.baseCommit(mirrorPath, undefined)
        assert.deepStrictEqual(first, { branch: "main", tip: remote.main })

        const read = (base: string | undefined) =>
          Effect.suspend(() => {
            runs.length = 0
            return workspaces.baseCommit(mirrorPath, base)
          })
        assert.deepStrictEqual(yield* read(undefined), { branch: "main", tip: remote.main })
        assert.deepStrictEqual(runs, ["for-each-ref"], "the default base: one run")
        assert.deepStrictEqual(yield* read("main"), { branch: "main", tip: remote.main })
        assert.deepStrictEqual(runs, ["for-each-ref"], "a named base: one run")

        // The base branch at an annotated tag of its commit: the tip is the commit, as rev-parse peels it.
        gitSync(root, "--git-dir", mirrorPath, "tag", "-a", "-m", "t", "t", remote.main)
        const tag = gitSync(root, "--git-dir", mirrorPath, "rev-parse", "refs/tags/t").trim()
        gitSync(root, "--git-dir", mirrorPath, "update-ref", "refs/prbox/base/main", tag)
        assert.deepStrictEqual(yield* read(undefined), { branch: "main", tip: remote.main })
        assert.include(runs, "rev-parse", "a tag is not a tip: the locked way peels it")

        // The base ref gone (the default still names it): fetched again.
        gitSync(root, "--git-dir", mirrorPath, "update-ref", "-d", "refs/prbox/base/main")
        assert.deepStrictEqual(yield* read(undefined), { branch: "main", tip: remote.main })
        assert.include(runs, "fetch")
        const unsafe = yield* Effect.flip(read("-x"))
        assert.strictEqual(unsafe._tag, "UnsafeArgument")
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"), git)))
    })
  )
})

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
        // Asked on every open: the default base read and its tip read, once each, and nothing written.
        assert.deepStrictEqual(
          baseArgs.slice(baseReads).map((args) => args.find((arg) => arg === "symbolic-ref" || arg === "rev-parse")),
          ["symbolic-ref", "rev-parse"]
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
})

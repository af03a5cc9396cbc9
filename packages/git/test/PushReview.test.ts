import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { parseBundleHeader } from "../src/BundleHeader.ts"
import { type PushTarget, parsePullRequestRef, Workspaces } from "../src/index.ts"
import { parsePushLog, pushOutcome } from "../src/PushParse.ts"
import { type GitRun, gitSync, isolatedEnv, makeRemote, tempDir, testGit, workspacesLayer } from "./helpers.ts"

/** What a mirror holds: its object count and pack files, to show it gained nothing. */
const objectsOf = (mirror: string) => ({
  count: gitSync(mirror, `--git-dir=${mirror}`, "count-objects", "-v"),
  packs: readdirSync(NodePath.join(mirror, "objects", "pack")).sort()
})

/** A repository standing in for a sandbox's workspace: a clone of the remote at PR 1's head. */
const sandboxClone = (root: string, remote: string, pr1: string) => {
  const work = NodePath.join(root, "sandbox")
  gitSync(root, "clone", "--quiet", "--no-checkout", remote, work)
  gitSync(work, "fetch", "--quiet", "origin", "refs/pull/1/head")
  gitSync(work, "checkout", "--quiet", "-b", "pr-1", pr1)
  return work
}

const commitIn = (work: string, file: string): string => {
  writeFileSync(NodePath.join(work, file), `${file}\n`)
  gitSync(work, "add", file)
  gitSync(work, "commit", "--quiet", "-m", `add ${file}`)
  return gitSync(work, "rev-parse", "HEAD")
}

const bundleOf = (work: string, ...revs: ReadonlyArray<string>): Uint8Array => {
  const file = NodePath.join(work, "..", "out.bundle")
  gitSync(work, "bundle", "create", "--quiet", file, ...revs)
  return new Uint8Array(readFileSync(file))
}

/** A remote, its mirror (PR 1 fetched), a sandbox clone, and `feature` on the remote at PR 1's head (a same-repository PR's branch). */
const setUp = Effect.gen(function* () {
  const root = yield* tempDir
  const remote = makeRemote(root)
  gitSync(root, `--git-dir=${remote.path}`, "update-ref", "refs/heads/feature", remote.pr1)
  const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 1 }))
  const state = NodePath.join(root, "state")
  const fetched = yield* Workspaces.use((w) => w.fetchPullRequest(ref)).pipe(Effect.provide(workspacesLayer(state)))
  return { root, remote, state, mirror: fetched.mirrorPath, work: sandboxClone(root, remote.path, remote.pr1) }
})

const review = (state: string, mirror: string, bundle: Uint8Array, head: string, push?: PushTarget, git = testGit()) =>
  Workspaces.use((w) =>
    w.reviewPush({ mirrorPath: mirror, bundle, head, ...(push === undefined ? {} : { push }) })
  ).pipe(Effect.provide(workspacesLayer(state, git)))

const rejection = (effect: Effect.Effect<unknown, { readonly _tag: string }>) =>
  Effect.map(Effect.flip(effect), (error) => {
    assert.strictEqual(error._tag, "PushRejected")
    return error as unknown as { kind: string; detail: string }
  })

describe("a sandbox's commits checked and pushed from a temporary repository", () => {
  it.effect("shows the commits, pushes them with the lease, and leaves the mirror and prbox's state as they were", () =>
    Effect.gen(function* () {
      const { root, remote, state, mirror, work } = yield* setUp
      commitIn(work, "one.txt")
      const tip = commitIn(work, "two.txt")
      const bundle = bundleOf(work, "HEAD", `^${remote.pr1}`)
      const before = objectsOf(mirror)

      const shown = yield* review(state, mirror, bundle, remote.pr1)
      assert.strictEqual(shown.tip, tip)
      assert.isFalse(shown.pushed)
      assert.deepStrictEqual(
        shown.commits.map((c) => [c.subject, c.author, c.files]),
        [
          ["add two.txt", "prbox test <test@prbox.invalid>", ["two.txt"]],
          ["add one.txt", "prbox test <test@prbox.invalid>", ["one.txt"]]
        ]
      )
      assert.strictEqual(gitSync(root, `--git-dir=${remote.path}`, "rev-parse", "refs/heads/feature"), remote.pr1)

      const pushed = yield* review(state, mirror, bundle, remote.pr1, { url: remote.path, branch: "feature" })
      assert.isTrue(pushed.pushed)
      assert.strictEqual(gitSync(root, `--git-dir=${remote.path}`, "rev-parse", "refs/heads/feature"), tip)
      assert.deepStrictEqual(objectsOf(mirror), before)
      // The temporary repositories are gone.
      assert.deepStrictEqual(readdirSync(NodePath.join(state, "push")), [])
    })
  )

  it.effect("a lease that fails because someone pushed to the branch in between: nothing pushed", () =>
    Effect.gen(function* () {
      const { root, remote, state, mirror, work } = yield* setUp
      commitIn(work, "mine.txt")
      const bundle = bundleOf(work, "HEAD", `^${remote.pr1}`)
      // Someone else's commit lands on the branch when prbox's push starts: after the checks, before the push.
      const other = NodePath.join(root, "other")
      gitSync(root, "clone", "--quiet", remote.path, other)
      gitSync(other, "checkout", "--quiet", "-b", "feature", remote.pr1)
      const theirs = commitIn(other, "theirs.txt")
      const racing =
        (run: GitRun): GitRun =>
        (args, options) =>
          Effect.suspend(() => {
            if (args.includes("push")) gitSync(other, "push", "--quiet", "origin", "feature")
            return run(args, options)
          })
      const refused = yield* rejection(
        review(state, mirror, bundle, remote.pr1, { url: remote.path, branch: "feature" }, testGit(racing))
      )
      assert.strictEqual(refused.kind, "lease-failed")
      assert.include(refused.detail, "prbox update")
      assert.strictEqual(gitSync(root, `--git-dir=${remote.path}`, "rev-parse", "refs/heads/feature"), theirs)
      assert.deepStrictEqual(readdirSync(NodePath.join(state, "push")), [])
    })
  )

  it.effect(
    "refuses a bundle with two refs, a malformed object, no new commits, and a history that is not a fast-forward",
    () =>
      Effect.gen(function* () {
        const { remote, state, mirror, work } = yield* setUp
        const target = { url: remote.path, branch: "feature" }
        const before = objectsOf(mirror)
        commitIn(work, "one.txt")
        gitSync(work, "branch", "extra")
        const twoRefs = yield* rejection(
          review(state, mirror, bundleOf(work, "HEAD", "extra", `^${remote.pr1}`), remote.pr1, target)
        )
        assert.strictEqual(twoRefs.kind, "bundle")
        assert.include(twoRefs.detail, "2 refs")

        // A tree with a duplicate entry, written loose by hand: fsck's error, not a warning.
        const blob = gitSync(work, "hash-object", "-w", "--stdin", "pr1.txt")
        const raw = NodePath.join(work, "..", "bad-tree")
        const entry = Buffer.concat([Buffer.from("100644 a\0"), Buffer.from(blob, "hex")])
        writeFileSync(raw, Buffer.concat([entry, entry]))
        const tree = gitSync(work, "hash-object", "-t", "tree", "-w", "--literally", raw)
        const bad = execFileSync("git", ["commit-tree", tree, "-p", "HEAD", "-m", "bad"], {
          cwd: work,
          env: { ...process.env, ...isolatedEnv },
          encoding: "utf8"
        }).trim()
        gitSync(work, "update-ref", "refs/heads/bad", bad)
        const malformed = yield* rejection(
          review(state, mirror, bundleOf(work, "bad", `^${remote.pr1}`), remote.pr1, target)
        )
        assert.strictEqual(malformed.kind, "malformed")
        assert.include(malformed.detail, "duplicate")

        const none = yield* rejection(
          review(state, mirror, bundleOf(work, "pr-1", `^${remote.main}`), gitSync(work, "rev-parse", "pr-1"), target)
        )
        assert.strictEqual(none.kind, "no-new-commits")

        gitSync(work, "checkout", "--quiet", "-b", "elsewhere", remote.main)
        commitIn(work, "elsewhere.txt")
        const notFf = yield* rejection(
          review(state, mirror, bundleOf(work, "HEAD", `^${remote.main}`), remote.pr1, target)
        )
        assert.strictEqual(notFf.kind, "not-fast-forward")

        assert.strictEqual(gitSync(work, `--git-dir=${remote.path}`, "rev-parse", "refs/heads/feature"), remote.pr1)
        assert.deepStrictEqual(objectsOf(mirror), before)
        assert.isFalse(existsSync(NodePath.join(state, "push")) && readdirSync(NodePath.join(state, "push")).length > 0)
      })
  )
})

describe("a push's pure parts", () => {
  it("reads a bundle header: refs, prerequisites, the pack's start; refuses anything else", () => {
    const oid = "a".repeat(40)
    const enc = (text: string) => new TextEncoder().encode(text)
    const text = `# v2 git bundle\n-${oid} base\n${oid} HEAD\n\nPACK`
    const ok = parseBundleHeader(enc(text))
    assert.deepStrictEqual(ok, {
      prerequisites: [oid],
      refs: [{ commit: oid, name: "HEAD" }],
      packStart: text.indexOf("PACK")
    })
    const table: ReadonlyArray<[string, string]> = [
      ["PACK", "not a git bundle"],
      ["# v9 git bundle\n\n", "version 2 or 3"],
      [`# v3 git bundle\n@filter=blob:none\n${oid} HEAD\n\n`, "capability"],
      [`# v2 git bundle\n@object-format=sha1\n\n`, "capability"],
      [`# v2 git bundle\n${oid}\n\n`, "malformed ref"],
      [`# v2 git bundle\nxyz HEAD\n\n`, "malformed ref"],
      [`# v2 git bundle\n-zz\n\n`, "malformed prerequisite"],
      [`# v2 git bundle\n${oid} HEAD\n`, "no end"]
    ]
    for (const [text, reason] of table) {
      const parsed = parseBundleHeader(enc(text))
      assert.isString(parsed, text)
      assert.include(parsed as string, reason)
    }
  })

  it("parses the log shown before a push and what git push said", () => {
    const log = "\x1eaaa\x1fA <a@x>\x1ffirst\n\nx.txt\ny.txt\n\x1ebbb\x1fB <b@x>\x1fsecond\n"
    assert.deepStrictEqual(parsePushLog(log), [
      { commit: "aaa", author: "A <a@x>", subject: "first", files: ["x.txt", "y.txt"] },
      { commit: "bbb", author: "B <b@x>", subject: "second", files: [] }
    ])
    assert.strictEqual(pushOutcome({ exitCode: 0, stdout: "", stderr: "" }), "pushed")
    const stale = pushOutcome({
      exitCode: 1,
      stdout: "To r\n!\ta:refs/heads/f\t[rejected] (stale info)\nDone\n",
      stderr: ""
    })
    assert.strictEqual(stale !== "pushed" && stale.kind, "lease-failed")
    const other = pushOutcome({ exitCode: 128, stdout: "", stderr: "fatal: could not read from https://u:secret@h/r" })
    assert.strictEqual(other !== "pushed" && other.kind, "push-failed")
    assert.notInclude(other !== "pushed" ? other.detail : "", "secret")
  })
})

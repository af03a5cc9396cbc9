import { execFileSync } from "node:child_process"
import { renameSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { parsePullRequestRef, Workspaces } from "../src/index.ts"
import { makeRemote, pushPullRequest, tempDir, workspacesLayer } from "./helpers.ts"

/** `effect` run with the mirror moved away (git can read nothing of it), then put back. */
const mirrorAway = <A, E, R>(mirrorPath: string, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => renameSync(mirrorPath, `${mirrorPath}.away`)),
    () => effect,
    () => Effect.sync(() => renameSync(`${mirrorPath}.away`, mirrorPath))
  )

describe("Workspaces.commitFiles", () => {
  it.effect("reads files and folders of the fetched commit; absent paths are undefined; links are refused", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const head = pushPullRequest(remote.path, 7, {
        ".devcontainer/devcontainer.json": '{ "image": "x" }\n',
        ".devcontainer/python/devcontainer.json": "{}\n",
        ".devcontainer.json": { link: "/etc/passwd" }
      })
      const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 7 }))
      const { files, fetched } = yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const fetched = yield* workspaces.fetchPullRequest(ref)
        return { files: workspaces.commitFiles(fetched.mirrorPath, fetched.commit), fetched }
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      assert.strictEqual(fetched.commit, head)
      assert.strictEqual(yield* files.read(".devcontainer/devcontainer.json"), '{ "image": "x" }\n')
      assert.isUndefined(yield* files.read("missing.json"))
      assert.isUndefined(yield* files.read(".devcontainer"), "a folder is not a file")
      assert.deepStrictEqual(yield* files.list(".devcontainer"), [
        { name: "devcontainer.json", type: "file" },
        { name: "python", type: "dir" }
      ])
      assert.isUndefined(yield* files.list("nothing"))
      // The root is listed by "", links left out.
      assert.deepStrictEqual(
        (yield* files.list(""))?.filter((entry) => entry.name.startsWith(".devcontainer")),
        [{ name: ".devcontainer", type: "dir" }]
      )
      const link = yield* Effect.flip(files.read(".devcontainer.json"))
      assert.strictEqual(link._tag, "UnsafeArgument")
      assert.include(link.message, "symbolic link")
      const outside = yield* Effect.flip(files.read("../outside"))
      assert.strictEqual(outside._tag, "UnsafeArgument")
      // The mirror was not checked out: the files came from git objects alone.
      assert.strictEqual(
        execFileSync("git", ["-C", fetched.mirrorPath, "rev-parse", "--is-bare-repository"]).toString().trim(),
        "true"
      )
    })
  )

  it.effect("a commit read again (its base, by the next open) answers from what was read: git is not run again", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      pushPullRequest(remote.path, 4, { ".devcontainer/devcontainer.json": '{ "image": "x" }\n' })
      const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 4 }))
      yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const fetched = yield* workspaces.fetchPullRequest(ref)
        const reader = () => workspaces.commitFiles(fetched.mirrorPath, fetched.commit)
        assert.strictEqual(yield* reader().read(".devcontainer/devcontainer.json"), '{ "image": "x" }\n')
        // The mirror gone, git can answer nothing: a new reader of the same commit still does.
        yield* mirrorAway(
          fetched.mirrorPath,
          Effect.gen(function* () {
            assert.strictEqual(yield* reader().read(".devcontainer/devcontainer.json"), '{ "image": "x" }\n')
            assert.isUndefined(yield* reader().read(".devcontainer/other.json"))
            const unread = yield* Effect.flip(reader().read("src/never-listed.txt").pipe(Effect.asVoid))
            assert.strictEqual(unread._tag, "GitCommandFailed", "a folder never listed needs git")
          })
        )
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
    })
  )

  it.effect("a long listing or a large file (a PR's choosing) is not kept: git reads them again", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const many = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`many/file-${i}.txt`, `${i}\n`]))
      pushPullRequest(remote.path, 5, many)
      pushPullRequest(remote.path, 6, { ".devcontainer/big.json": `${"x".repeat(70 * 1024)}\n` })
      const refOf = (pr: number) => Result.getOrThrow(parsePullRequestRef(remote.path, { pr }))
      yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const [five, six] = [yield* workspaces.fetchPullRequest(refOf(5)), yield* workspaces.fetchPullRequest(refOf(6))]
        const files = (fetched: typeof five) => workspaces.commitFiles(fetched.mirrorPath, fetched.commit)
        assert.strictEqual(yield* files(five).read("many/file-7.txt"), "7\n")
        assert.lengthOf((yield* files(six).read(".devcontainer/big.json")) ?? "", 70 * 1024 + 1)
        yield* mirrorAway(
          five.mirrorPath,
          Effect.gen(function* () {
            const listing = yield* Effect.flip(files(five).read("many/file-7.txt").pipe(Effect.asVoid))
            assert.strictEqual(listing._tag, "GitCommandFailed", "a 600-entry listing was kept")
            const text = yield* Effect.flip(files(six).read(".devcontainer/big.json").pipe(Effect.asVoid))
            assert.strictEqual(text._tag, "GitCommandFailed", "a 70 KiB text was kept")
            // Its listing was kept: a file it lacks is answered without git.
            assert.isUndefined(yield* files(six).read(".devcontainer/none.json"))
          })
        )
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
    })
  )

  it.effect("a top-level folder listed with the root: a root file of the folder's name is still read", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      pushPullRequest(remote.path, 3, { ".devcontainer": "not a folder\n", "notes.txt": "notes\n" })
      const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 3 }))
      const files = yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const fetched = yield* workspaces.fetchPullRequest(ref)
        return workspaces.commitFiles(fetched.mirrorPath, fetched.commit)
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      // The first read lists the root and .devcontainer/ together.
      assert.isUndefined(yield* files.read(".devcontainer/devcontainer.json"))
      assert.isUndefined(yield* files.list(".devcontainer"))
      assert.strictEqual(yield* files.read(".devcontainer"), "not a folder\n")
      assert.strictEqual(yield* files.read("notes.txt"), "notes\n")
    })
  )

  it.effect("readBytes: a binary file's bytes whole; a link and a file over the bound refused", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      // Every byte value, and sequences that are not UTF-8: a text read would replace them.
      const binary = Uint8Array.from({ length: 4096 }, (_, i) => (i * 37 + (i >> 8)) % 256)
      pushPullRequest(remote.path, 4, { "data/blob.bin": binary, "data/link": { link: "/etc/passwd" } })
      const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 4 }))
      const files = yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const fetched = yield* workspaces.fetchPullRequest(ref)
        return workspaces.commitFiles(fetched.mirrorPath, fetched.commit)
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      const bytes = yield* files.readBytes("data/blob.bin", binary.length)
      assert.deepStrictEqual(bytes === undefined ? undefined : Array.from(bytes), Array.from(binary))
      assert.isUndefined(yield* files.readBytes("data/missing.bin", 10))
      assert.include((yield* Effect.flip(files.readBytes("data/link", 10))).message, "symbolic link")
      assert.include((yield* Effect.flip(files.readBytes("data/blob.bin", 4095))).message, "larger than 4095 bytes")
    })
  )
})

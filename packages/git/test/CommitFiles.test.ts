import { execFileSync } from "node:child_process"
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { parsePullRequestRef, Workspaces } from "../src/index.ts"
import { gitSync, tempDir, workspacesLayer } from "./helpers.ts"

/** A remote whose PR 7 adds a devcontainer folder, a symlink and a nested folder. */
const remoteWithFiles = (root: string) => {
  const work = NodePath.join(root, "work")
  const path = NodePath.join(root, "remote.git")
  gitSync(root, "init", "--quiet", "--initial-branch=main", work)
  mkdirSync(NodePath.join(work, ".devcontainer", "python"), { recursive: true })
  writeFileSync(NodePath.join(work, ".devcontainer", "devcontainer.json"), '{ "image": "x" }\n')
  writeFileSync(NodePath.join(work, ".devcontainer", "python", "devcontainer.json"), "{}\n")
  symlinkSync("/etc/passwd", NodePath.join(work, ".devcontainer.json"))
  gitSync(work, "add", ".")
  gitSync(work, "commit", "--quiet", "-m", "files")
  const head = gitSync(work, "rev-parse", "HEAD")
  gitSync(root, "init", "--quiet", "--bare", "--initial-branch=main", path)
  gitSync(work, "push", "--quiet", path, `${head}:refs/pull/7/head`)
  return { path, head }
}

describe("Workspaces.commitFiles", () => {
  it.effect("reads files and folders of the fetched commit; absent paths are undefined; links are refused", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = remoteWithFiles(root)
      const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 7 }))
      const { files, fetched } = yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const fetched = yield* workspaces.fetchPullRequest(ref)
        return { files: workspaces.commitFiles(fetched.mirrorPath, fetched.commit), fetched }
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      assert.strictEqual(fetched.commit, remote.head)
      assert.strictEqual(yield* files.read(".devcontainer/devcontainer.json"), '{ "image": "x" }\n')
      assert.isUndefined(yield* files.read("missing.json"))
      assert.isUndefined(yield* files.read(".devcontainer"), "a folder is not a file")
      assert.deepStrictEqual(yield* files.list(".devcontainer"), [
        { name: "devcontainer.json", type: "file" },
        { name: "python", type: "dir" }
      ])
      assert.isUndefined(yield* files.list("nothing"))
      const link = yield* Effect.flip(files.read(".devcontainer.json"))
      assert.strictEqual(link._tag, "UnsafeArgument")
      assert.include(link.message, "symbolic link")
      const escape = yield* Effect.flip(files.read("../outside"))
      assert.strictEqual(escape._tag, "UnsafeArgument")
      // The mirror was not checked out: the files came from git objects alone.
      assert.strictEqual(
        execFileSync("git", ["-C", fetched.mirrorPath, "rev-parse", "--is-bare-repository"]).toString().trim(),
        "true"
      )
    })
  )
})

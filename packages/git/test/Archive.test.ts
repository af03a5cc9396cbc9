import { execFileSync } from "node:child_process"
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Workspaces } from "../src/index.ts"
import { treeBytes } from "../src/node/Archive.ts"
import { gitSync, refsOf, tempDir, workspacesLayer } from "./helpers.ts"

/** A repository with a work tree: a file, a folder, a link out of it, on `main`; a second commit moves `main`. */
const dotfilesSource = (root: string) => {
  const work = NodePath.join(root, "dots")
  gitSync(root, "init", "--quiet", "--initial-branch=main", work)
  writeFileSync(NodePath.join(work, ".bashrc"), "# mine\n")
  mkdirSync(NodePath.join(work, "script"))
  writeFileSync(NodePath.join(work, "script", "setup"), "#!/bin/sh\n", { mode: 0o755 })
  symlinkSync("/etc/passwd", NodePath.join(work, ".profile"))
  gitSync(work, "add", "--all")
  gitSync(work, "commit", "--quiet", "-m", "dotfiles")
  return work
}

describe("a remote's HEAD into its own mirror, and a commit's files as a tar", () => {
  it("treeBytes adds ls-tree's sizes; submodules count as nothing", () => {
    const listing = [
      "100644 blob aaaa     12\t.bashrc",
      "120000 blob bbbb     11\t.profile",
      "160000 commit cccc       -\tvendor/lib",
      "100755 blob dddd 1000\tpath with spaces"
    ].join("\0")
    assert.strictEqual(treeBytes(`${listing}\0`), 1023)
    assert.strictEqual(treeBytes(""), 0)
  })

  it.effect("fetches the default branch (again after it moves) and archives its files: links as links, no .git", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const work = dotfilesSource(root)
      const state = NodePath.join(root, "state")
      const { first, second, archive, refused } = yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const first = yield* workspaces.fetchRemoteHead(work)
        writeFileSync(NodePath.join(work, ".vimrc"), "set nu\n")
        gitSync(work, "add", ".vimrc")
        gitSync(work, "commit", "--quiet", "-m", "vim")
        const second = yield* workspaces.fetchRemoteHead(work)
        const archive = yield* workspaces.archiveCommit(second.mirrorPath, second.commit, 1024)
        const refused = yield* Effect.flip(workspaces.archiveCommit(second.mirrorPath, second.commit, 10))
        return { first, second, archive, refused }
      }).pipe(Effect.provide(workspacesLayer(state)))

      assert.strictEqual(first.mirrorPath, second.mirrorPath)
      assert.isTrue(second.mirrorPath.startsWith(NodePath.join(state, "mirrors", "dotfiles")), second.mirrorPath)
      assert.strictEqual(second.commit, gitSync(work, "rev-parse", "HEAD"))
      assert.notStrictEqual(first.commit, second.commit)
      assert.deepStrictEqual(refsOf(second.mirrorPath, "refs/prbox/head"), [`refs/prbox/head ${second.commit}`])

      const listing = execFileSync("tar", ["-tvf", "-"], { input: archive, encoding: "utf8" })
      const names = listing
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => line.split(/\s+/).slice(5).join(" "))
      assert.deepStrictEqual(names.sort(), [".bashrc", ".profile -> /etc/passwd", ".vimrc", "script/", "script/setup"])
      assert.match(listing, /^-rwx\S* .* script\/setup$/m, "the script stays executable")
      assert.strictEqual(refused._tag, "UnsafeArgument")
      assert.match(refused.message, /^archiveCommit: its files hold 0\.0 MiB, over 0 MiB$/)
    })
  )
})

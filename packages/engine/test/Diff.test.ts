import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { gitSync, pushPullRequest } from "../../git/test/helpers.ts"
import { writePullRequestFields } from "../../store/test/pull-request-rows.ts"
import { SandboxFiles, SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { openRunning, withEngine } from "./harness.ts"

const PR = 6

describe("a sandbox's diff", () => {
  it.live("head: the sandbox's edits and new files since the PR's head; base: the PR's own changes; both bounded", () =>
    withEngine({ config: { image: healthzGitImage() } }, ({ home, remote }) =>
      Effect.gen(function* () {
        const head = pushPullRequest(remote.path, PR, {
          "src/app.txt": "one\ntwo\n",
          "docs/a.md": "a\n",
          "README.md": "changed by the PR\n"
        })
        const files = yield* SandboxFiles
        const { id } = yield* openRunning(remote.path, PR)
        const diff = (request: Partial<Parameters<SandboxFiles["Service"]["diff"]>[1]>) =>
          files.diff(id, { against: "head", paths: [], stat: false, maxBytes: 100_000, ...request })

        const clean = yield* diff({})
        assert.deepStrictEqual([clean.diff, clean.from, clean.to, clean.truncated], ["", head, "workspace", false])

        yield* files.edit(id, { path: "src/app.txt", search: "two", replace: "TWO" })
        yield* files.write(id, { path: "untracked/new.txt", content: "fresh\n" })
        const changed = yield* diff({})
        assert.include(changed.diff, "-two\n+TWO")
        assert.include(changed.diff, "+++ b/untracked/new.txt")
        assert.include(changed.diff, "+fresh")
        const onlyNew = yield* diff({ paths: ["untracked"], stat: true })
        assert.match(onlyNew.diff, /untracked\/new\.txt \| 1 \+/)
        assert.notInclude(onlyNew.diff, "src/app.txt")
        const cut = yield* diff({ maxBytes: 60 })
        assert.isTrue(cut.truncated)
        assert.isAtMost(new TextEncoder().encode(cut.diff).length, 60)
        assert.isTrue(changed.diff.startsWith(cut.diff), "the head of the diff is kept")
        const climbing = yield* Effect.flip(diff({ paths: ["../x"] }))
        assert.strictEqual(climbing._tag, "InvalidPath")

        // The diff used an index of its own: nothing is staged in the user's.
        const staged = yield* SandboxService.use((sandboxes) =>
          sandboxes.exec(id, ["git", "diff", "--cached", "--name-only"], { timeoutMs: 10_000, maxOutputBytes: 4096 })
        )
        assert.deepStrictEqual([staged.exitCode, staged.stdout], [0, ""])
        // The scripts on coreutils and GNU sed/find (the busybox tests cover the other tools).
        const read = yield* files.read(id, { path: "src/app.txt", startLine: 2, maxBytes: 1024 })
        assert.deepStrictEqual([read.content, read.totalLines, read.endLine], ["TWO\n", 2, 2])
        const listed = yield* files.list(id, { path: ".", depth: 2 })
        assert.includeDeepMembers(
          [...listed.entries],
          [
            { path: ".git", type: "directory", size: null },
            { path: "untracked/new.txt", type: "file", size: 6 }
          ]
        )
        assert.isFalse(listed.entries.some((entry) => entry.path.startsWith(".git/")))

        const base = yield* diff({ against: "base" })
        assert.deepStrictEqual([base.from, base.to], [remote.main, head])
        assert.include(base.diff, "+++ b/src/app.txt")
        assert.include(base.diff, "+one\n+two")
        assert.notInclude(base.diff, "new.txt", "the sandbox's changes are not the PR's")
        assert.deepStrictEqual(base.files, [
          { path: "README.md", change: "modified" },
          { path: "docs/a.md", change: "added" },
          { path: "src/app.txt", change: "added" }
        ])

        // A diff view's two sides, from the mirror: the sandbox's edit of src/app.txt is not the PR's.
        const side = (which: "base" | "head", path: string) => files.pullRequestFile(id, { side: which, path })
        const readmeBase = yield* side("base", "README.md")
        const readmeHead = yield* side("head", "README.md")
        assert.deepStrictEqual(
          [readmeBase.commit, readmeBase.present, readmeBase.content],
          [remote.main, true, "README.md\n"]
        )
        assert.deepStrictEqual([readmeHead.commit, readmeHead.content], [head, "changed by the PR\n"])
        assert.deepStrictEqual(
          [(yield* side("base", "src/app.txt")).present, (yield* side("head", "src/app.txt")).content],
          [false, "one\ntwo\n"]
        )
        assert.strictEqual((yield* Effect.flip(side("head", "../x")))._tag, "InvalidPath")
        assert.strictEqual((yield* Effect.flip(side("head", ".")))._tag, "SandboxConflict")

        // The base branch the code host names for the PR, not the default one: here one already holding the head.
        gitSync(remote.path, "update-ref", "refs/heads/develop", head)
        writePullRequestFields(home, id, {
          title: null,
          author: null,
          pullRequestState: "open",
          baseRef: "develop",
          closedSeenAt: null
        })
        const againstDevelop = yield* diff({ against: "base" })
        assert.deepStrictEqual([againstDevelop.from, againstDevelop.files], [head, []])
      })
    )
  )
})

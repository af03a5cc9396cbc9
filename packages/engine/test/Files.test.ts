import { assert, describe, it } from "@effect/vitest"
import type { SandboxId } from "@prbox/domain"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { EDIT_READ_SH } from "../src/exec/FileScripts.ts"
import { type ContainerRuntime, SandboxFiles, SandboxService } from "../src/index.ts"
import { openRunning, withEngine } from "./harness.ts"

// The healthz image is busybox: these run the scripts on busybox's sh and tools.
const lines = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n")
const PR_FILES = {
  "src/a.txt": "one\ntwo\nthree\n",
  "src/unterminated.txt": "first\nlast",
  "big.txt": `${lines}\n`,
  "bin.dat": "a\0b\n",
  "dir/nested/deep/file.txt": "deep\n",
  "multi.txt": "x-x-x\n",
  "link-in": { link: "src/a.txt" },
  // Targets that exist in the image (it has no /etc/passwd): a refusal, not "no such file".
  "link-out-abs": { link: "/srv/prbox/entrypoint.sh" },
  "link-out-rel": { link: "../../../../../../../srv/prbox/entrypoint.sh" },
  "dir-out": { link: "/srv/prbox" },
  "dir-in": { link: "src" }
} as const

const PR = 5

const refusedPath = (id: SandboxId, path: string, reason: string) =>
  Effect.gen(function* () {
    const files = yield* SandboxFiles
    const failure = yield* Effect.flip(files.read(id, { path, maxBytes: 1024 }))
    assert.strictEqual(failure._tag, "InvalidPath", `${path}: ${failure.message}`)
    assert.include(failure.message, reason, path)
  })

describe("a sandbox's files", () => {
  it.live("read: line ranges, the byte bound at a whole line, binary files, sizes; folders and escapes refused", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        pushPullRequest(remote.path, PR, PR_FILES)
        const files = yield* SandboxFiles
        const { id } = yield* openRunning(remote.path, PR)

        const whole = yield* files.read(id, { path: "src/a.txt", maxBytes: 1024 })
        assert.deepStrictEqual(whole, {
          path: "src/a.txt",
          content: "one\ntwo\nthree\n",
          size: 14,
          totalLines: 3,
          startLine: 1,
          endLine: 3,
          truncated: false,
          binary: false
        })
        const middle = yield* files.read(id, { path: "./src/../src/a.txt", startLine: 2, endLine: 2, maxBytes: 1024 })
        assert.strictEqual(middle.content, "two\n")
        assert.deepStrictEqual([middle.path, middle.startLine, middle.endLine], ["src/a.txt", 2, 2])
        const tail = yield* files.read(id, { path: "src/unterminated.txt", startLine: 2, maxBytes: 1024 })
        assert.deepStrictEqual([tail.content, tail.totalLines, tail.endLine], ["last", 2, 2])
        const past = yield* files.read(id, { path: "src/a.txt", startLine: 9, maxBytes: 1024 })
        assert.deepStrictEqual([past.content, past.startLine, past.endLine], ["", 9, 8])

        // Bounded at 100 bytes: cut after the last whole line, and said so.
        const cut = yield* files.read(id, { path: "big.txt", startLine: 10, maxBytes: 100 })
        assert.isTrue(cut.truncated)
        assert.isAtMost(new TextEncoder().encode(cut.content).length, 100)
        assert.isTrue(cut.content.startsWith("line 10\n") && cut.content.endsWith("\n"))
        assert.strictEqual(cut.endLine, 10 + cut.content.split("\n").length - 2)
        assert.strictEqual(cut.totalLines, 3000)
        assert.strictEqual(cut.size, lines.length + 1)
        const next = yield* files.read(id, {
          path: "big.txt",
          startLine: cut.endLine + 1,
          endLine: cut.endLine + 1,
          maxBytes: 100
        })
        assert.strictEqual(next.content, `line ${cut.endLine + 1}\n`)

        const binary = yield* files.read(id, { path: "bin.dat", maxBytes: 1024 })
        assert.deepStrictEqual([binary.binary, binary.content, binary.size], [true, "", 4])

        // A symbolic link that stays inside is followed.
        assert.strictEqual((yield* files.read(id, { path: "link-in", maxBytes: 1024 })).content, "one\ntwo\nthree\n")
        assert.strictEqual(
          (yield* files.read(id, { path: "dir-in/a.txt", maxBytes: 1024 })).content,
          "one\ntwo\nthree\n"
        )

        yield* refusedPath(id, "src", "is a directory; use list")
        yield* refusedPath(id, "missing.txt", "no such file")
        yield* refusedPath(id, "../../etc/passwd", "climbs out")
        yield* refusedPath(id, "/etc/passwd", "absolute")
        yield* refusedPath(id, "link-out-abs", "outside the workspace")
        yield* refusedPath(id, "link-out-rel", "outside the workspace")
        yield* refusedPath(id, "dir-out/entrypoint.sh", "outside the workspace")
      })
    )
  )

  it.live("list: depth, sizes and types, .git listed without its insides; a stopped sandbox refuses", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        pushPullRequest(remote.path, PR, PR_FILES)
        const files = yield* SandboxFiles
        const sandboxes = yield* SandboxService
        const { id } = yield* openRunning(remote.path, PR)

        const top = yield* files.list(id, { path: ".", depth: 1 })
        assert.isFalse(top.truncated)
        const byPath = new Map(top.entries.map((entry) => [entry.path, entry]))
        assert.deepStrictEqual(byPath.get(".git"), { path: ".git", type: "directory", size: null })
        assert.deepStrictEqual(byPath.get("src"), { path: "src", type: "directory", size: null })
        assert.deepStrictEqual(byPath.get("multi.txt"), { path: "multi.txt", type: "file", size: 6 })
        assert.deepStrictEqual(byPath.get("link-out-abs"), { path: "link-out-abs", type: "symlink", size: null })
        assert.isFalse(
          top.entries.some((entry) => entry.path.includes("/")),
          "depth 1 only"
        )
        const paths = top.entries.map((entry) => entry.path)
        assert.deepStrictEqual(paths, [...paths].sort())

        const deep = yield* files.list(id, { path: "dir", depth: 2 })
        assert.deepStrictEqual(
          deep.entries.map((entry) => entry.path),
          ["dir/nested", "dir/nested/deep"]
        )
        const all = yield* files.list(id, { path: ".", depth: 10 })
        assert.isTrue(all.entries.some((entry) => entry.path === "dir/nested/deep/file.txt"))
        assert.isFalse(
          all.entries.some((entry) => entry.path.startsWith(".git/")),
          ".git's insides are left out"
        )

        const notDir = yield* Effect.flip(files.list(id, { path: "multi.txt", depth: 1 }))
        assert.strictEqual(notDir._tag, "InvalidPath")
        const out = yield* Effect.flip(files.list(id, { path: "dir-out", depth: 1 }))
        assert.strictEqual(out._tag, "InvalidPath")

        const noGit = yield* Effect.flip(files.diff(id, { against: "head", paths: [], stat: false, maxBytes: 1024 }))
        assert.strictEqual(noGit._tag, "SandboxConflict")
        assert.include(noGit.message, "git is not installed in the sandbox's image")

        yield* sandboxes.stop(id)
        const stopped = yield* Effect.flip(files.read(id, { path: "multi.txt", maxBytes: 1024 }))
        assert.strictEqual(stopped._tag, "SandboxConflict")
        if (stopped._tag === "SandboxConflict") assert.strictEqual(stopped.state, "not-running")
      })
    )
  )

  it.live(
    "write and edit: made as the sandbox's user, folders made, one occurrence or a conflict; escapes refused",
    () => {
      // Set by the test: a change made between an edit's read and its write.
      let changeAfterEditRead: (() => Effect.Effect<unknown, unknown>) | undefined
      const runtime = (real: ContainerRuntime["Service"]): ContainerRuntime["Service"] => ({
        ...real,
        exec: (containerId, argv, options) =>
          Effect.tap(real.exec(containerId, argv, options), () =>
            argv[2]?.endsWith(EDIT_READ_SH) === true && changeAfterEditRead !== undefined
              ? Effect.orDie(changeAfterEditRead())
              : Effect.void
          )
      })
      return withEngine({ runtime }, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, PR, PR_FILES)
          const files = yield* SandboxFiles
          const { id } = yield* openRunning(remote.path, PR)
          const read = (path: string) => Effect.map(files.read(id, { path, maxBytes: 4096 }), (file) => file.content)

          const created = yield* files.write(id, { path: "new/folder/n.txt", content: "héllo\n" })
          assert.deepStrictEqual(created, { path: "new/folder/n.txt", bytes: 7, created: true })
          assert.strictEqual(yield* read("new/folder/n.txt"), "héllo\n")
          const replaced = yield* files.write(id, { path: "src/a.txt", content: "" })
          assert.deepStrictEqual(replaced, { path: "src/a.txt", bytes: 0, created: false })
          assert.strictEqual(yield* read("src/a.txt"), "")
          // Through a symbolic link that stays inside: its target changes.
          yield* files.write(id, { path: "link-in", content: "via link\n" })
          assert.strictEqual(yield* read("src/a.txt"), "via link\n")

          const one = yield* files.edit(id, { path: "src/unterminated.txt", search: "last", replace: "LAST" })
          assert.deepStrictEqual(one, { path: "src/unterminated.txt", occurrence: 1, occurrences: 1, bytes: 10 })
          assert.strictEqual(yield* read("src/unterminated.txt"), "first\nLAST")
          const second = yield* files.edit(id, { path: "multi.txt", search: "x", replace: "y", occurrence: 2 })
          assert.deepStrictEqual([second.occurrence, second.occurrences], [2, 3])
          assert.strictEqual(yield* read("multi.txt"), "x-y-x\n")

          const ambiguous = yield* Effect.flip(files.edit(id, { path: "multi.txt", search: "x", replace: "z" }))
          assert.strictEqual(ambiguous._tag, "SandboxConflict")
          assert.include(ambiguous.message, "occurs 2 times; pass occurrence 1..2")
          const absent = yield* Effect.flip(files.edit(id, { path: "multi.txt", search: "nope", replace: "z" }))
          assert.include(absent.message, "does not occur; read the file again")
          assert.strictEqual(yield* read("multi.txt"), "x-y-x\n", "a refused edit changes nothing")
          const binary = yield* Effect.flip(files.edit(id, { path: "bin.dat", search: "a", replace: "b" }))
          assert.strictEqual(binary._tag, "InvalidPath")

          const tooLarge = yield* Effect.flip(
            files.write(id, { path: "huge.txt", content: "x".repeat(256 * 1024 + 1) })
          )
          assert.strictEqual(tooLarge._tag, "TooLarge")
          for (const path of ["src", "../../tmp/x", "/tmp/x", "dir-out/x", "link-out-abs"]) {
            const refused = yield* Effect.flip(files.write(id, { path, content: "x" }))
            assert.strictEqual(refused._tag, "InvalidPath", `${path}: ${refused.message}`)
          }
          assert.strictEqual(
            yield* read("link-out-rel").pipe(
              Effect.flip,
              Effect.map((e) => e._tag)
            ),
            "InvalidPath"
          )

          // Another writer between the edit's read and its write: the edit is refused, the other write stays.
          changeAfterEditRead = () => files.write(id, { path: "multi.txt", content: "x-other\n" })
          const raced = yield* Effect.flip(files.edit(id, { path: "multi.txt", search: "y", replace: "z" }))
          changeAfterEditRead = undefined
          assert.strictEqual(raced._tag, "SandboxConflict")
          assert.include(raced.message, "changed while being edited; try again")
          assert.strictEqual(yield* read("multi.txt"), "x-other\n")
        })
      )
    }
  )
})

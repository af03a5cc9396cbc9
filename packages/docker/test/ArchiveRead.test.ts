import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Readable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import * as tar from "tar-stream"
import { ArchiveRead } from "../src/index.ts"

/**
 * Archives as a container's files could make them (names, links, modes the
 * PR chooses), read as data: nothing written outside the folder given, no
 * write through a link, no setuid bit kept.
 */
type Entry = tar.Headers & { readonly content?: string }

const archiveOf = (entries: ReadonlyArray<Entry>): Readable => {
  const pack = tar.pack()
  for (const { content, ...header } of entries) pack.entry(header, content ?? "")
  pack.finalize()
  return pack
}

const BOUNDS = { maxBytes: 1024, maxEntries: 100 }

const dir = (name: string): Entry => ({ name, type: "directory", mode: 0o755 })
const file = (name: string, content: string, mode = 0o644): Entry => ({ name, type: "file", mode, content })
const link = (name: string, target: string): Entry => ({ name, type: "symlink", linkname: target })

/** A fresh folder `in` inside a fresh `outside` folder, both removed after. */
const withFolder = <A, E>(use: (folder: string, outside: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const outside = mkdtempSync(join(tmpdir(), "prbox-archive-"))
      mkdirSync(join(outside, "in"))
      return outside
    }),
    (outside) => use(join(outside, "in"), outside),
    (outside) => Effect.sync(() => rmSync(outside, { recursive: true, force: true }))
  )

describe("extractArchive", () => {
  it.effect("writes files, folders and links as ours, permission bits only", () =>
    withFolder((folder) =>
      Effect.gen(function* () {
        const archive = archiveOf([
          dir("ctx"),
          file("ctx/Dockerfile", "FROM x\n"),
          file("ctx/tool", "#!/bin/sh\n", 0o4755),
          link("ctx/out", "/etc/passwd")
        ])
        assert.strictEqual(yield* ArchiveRead.extractArchive(archive, folder, BOUNDS), "ctx")
        assert.strictEqual(readFileSync(join(folder, "ctx/Dockerfile"), "utf8"), "FROM x\n")
        assert.strictEqual(statSync(join(folder, "ctx/tool")).mode & 0o7777, 0o755)
        assert.strictEqual(readlinkSync(join(folder, "ctx/out")), "/etc/passwd")
      })
    )
  )

  const refused: ReadonlyArray<readonly [string, ReadonlyArray<Entry>]> = [
    ["an entry under a link the archive made", [dir("ctx"), link("ctx/l", "../.."), file("ctx/l/escaped", "x")]],
    ["an entry with ..", [dir("ctx"), file("ctx/../escaped", "x")]],
    ["an absolute entry", [dir("ctx"), file("/tmp/escaped", "x")]],
    ["an entry under a folder the archive did not make", [dir("ctx"), file("other/escaped", "x")]],
    ["a file written over a link", [dir("ctx"), link("ctx/f", "../../escaped"), file("ctx/f", "x")]],
    ["a hard link to a file it did not write", [dir("ctx"), { name: "ctx/b", type: "link", linkname: "/etc/passwd" }]],
    ["more bytes than its bound", [dir("ctx"), file("ctx/big", "x".repeat(2048))]],
    [
      "more entries than its bound",
      [dir("ctx"), ...Array.from({ length: 120 }, (_, index) => file(`ctx/${index}`, ""))]
    ]
  ]
  for (const [name, entries] of refused) {
    it.effect(`refuses ${name}, and writes nothing outside`, () =>
      withFolder((folder, outside) =>
        Effect.gen(function* () {
          const result = yield* Effect.result(ArchiveRead.extractArchive(archiveOf(entries), folder, BOUNDS))
          assert.isTrue(Result.isFailure(result), "the archive was taken")
          assert.isFalse(existsSync(join(outside, "escaped")))
          assert.isFalse(existsSync("/tmp/escaped"))
          assert.isFalse(existsSync(join(folder, "ctx/null")))
        })
      )
    )
  }

  it.effect("a hard link becomes a copy; special files and skipped paths are left out, with all they hold", () =>
    withFolder((folder) =>
      Effect.gen(function* () {
        const archive = archiveOf([
          dir("ctx"),
          file("ctx/a", "shared"),
          { name: "ctx/b", type: "link", linkname: "ctx/a" },
          { name: "ctx/null", type: "character-device", devmajor: 1, devminor: 3 },
          { name: "ctx/pipe", type: "fifo" },
          dir("ctx/target"),
          file("ctx/target/huge", "x".repeat(2000))
        ])
        const skip = (path: string) => path === "target"
        assert.strictEqual(yield* ArchiveRead.extractArchive(archive, folder, { ...BOUNDS, skip }), "ctx")
        assert.strictEqual(readFileSync(join(folder, "ctx/b"), "utf8"), "shared")
        for (const left of ["null", "pipe", "target"]) assert.isFalse(existsSync(join(folder, "ctx", left)), left)
      })
    )
  )

  it.effect("an archived link (not a folder) writes nothing and answers undefined", () =>
    withFolder((folder) =>
      Effect.gen(function* () {
        assert.isUndefined(yield* ArchiveRead.extractArchive(archiveOf([link("ctx", "/")]), folder, BOUNDS))
        assert.isFalse(existsSync(join(folder, "ctx")))
      })
    )
  )
})

describe("readArchivedPath and listArchivedFolder", () => {
  it.effect("a file up to its bound; a link as a link; a folder's own entries", () =>
    Effect.gen(function* () {
      const read = (entries: ReadonlyArray<Entry>, max = 100) => ArchiveRead.readArchivedPath(archiveOf(entries), max)
      assert.deepStrictEqual(yield* read([file("a.json", "{}")]), {
        kind: "file",
        content: Buffer.from("{}"),
        truncated: false
      })
      assert.strictEqual(((yield* read([file("a.json", "x".repeat(10))], 4)) as { truncated: boolean }).truncated, true)
      assert.deepStrictEqual(yield* read([link("a.json", "/etc/passwd")]), { kind: "symlink", target: "/etc/passwd" })
      assert.deepStrictEqual(yield* read([dir("d")]), { kind: "directory" })
      const listed = yield* ArchiveRead.listArchivedFolder(
        archiveOf([
          dir(".devcontainer"),
          file(".devcontainer/devcontainer.json", "{}"),
          dir(".devcontainer/x"),
          file(".devcontainer/x/deep", "")
        ]),
        100
      )
      assert.deepStrictEqual(listed, [
        { name: "devcontainer.json", kind: "file" },
        { name: "x", kind: "directory" }
      ])
      assert.isUndefined(yield* ArchiveRead.listArchivedFolder(archiveOf([link(".devcontainer", "/etc")]), 100))
      const many = Array.from({ length: 5 }, (_, index) => file(`d/${index}`, ""))
      assert.isTrue(
        Result.isFailure(yield* Effect.result(ArchiveRead.listArchivedFolder(archiveOf([dir("d"), ...many]), 3)))
      )
    })
  )
})

import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type Sandbox, statePaths } from "@prbox/domain"
import { PrebuildRepo } from "@prbox/store"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { PrebuildCleanup, PrebuildSpares } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { logLines, openRunning, withEngine } from "./harness.ts"
import { gitIn, prebuiltBase, removePrebuildsOf } from "./prebuild-support.ts"

const read = (row: Sandbox, file: string) => readFileSync(join(row.workspacePath ?? "", file), "utf8")

/** The spares' folder names (`<prebuild>.<random>`, `.partial` while made). */
const sparesIn = (home: string) => {
  try {
    return readdirSync(statePaths(home).spares).sort()
  } catch {
    return []
  }
}

const devcontainer = JSON.stringify({
  image: healthzGitImage(),
  onCreateCommand: "mkdir -p deps && echo made-on-$(git rev-parse --short HEAD) > deps/made",
  updateContentCommand: "echo update-$(cat pr.txt 2>/dev/null || echo base) >> deps/log"
})

/** A repository whose base has create-time steps, opened once (the full path) so its prebuild and its spare are made. */
const prebuiltRemote = (remote: string) =>
  Effect.gen(function* () {
    const { base } = yield* prebuiltBase(remote, devcontainer)
    yield* (yield* PrebuildSpares).settled
    const [made] = yield* (yield* PrebuildRepo).list
    assert.strictEqual(made?.state, "ready", made?.error ?? "no prebuild")
    return { base, prebuild: made?.id ?? "" }
  })

describe("a prebuild's spare", () => {
  it.live(
    "a ready prebuild gets a spare; the next open takes it (no copy at the open) and another is made behind it; with none, the open copies",
    () =>
      withEngine({ config: { prebuilds: { maxGiB: 10, keepDays: 7 } } }, ({ home, remote }) =>
        Effect.gen(function* () {
          const { base, prebuild } = yield* prebuiltRemote(remote.path)
          const [spare, ...more] = sparesIn(home)
          assert.match(spare ?? "", new RegExp(`^${prebuild}\\.[0-9a-f]+$`), "one ready spare")
          assert.lengthOf(more, 0)

          const head = pushPullRequest(remote.path, 1, { "pr.txt": "one" })
          const row = yield* openRunning(remote.path, 1)
          assert.include((yield* logLines(row.id)).join("\n"), `from prebuild ${prebuild}`)
          assert.include((yield* logLines(row.id)).join("\n"), "its files were copied ahead")
          assert.strictEqual(
            row.workspacePath,
            statePaths(home).sandbox(row.id).workspace,
            "the spare is its own folder"
          )
          assert.strictEqual(gitIn(row, "rev-parse", "HEAD"), head, "the PR's own head")
          assert.strictEqual(
            read(row, "deps/made"),
            `made-on-${base.slice(0, 7)}\n`,
            "what onCreate made, in the prebuild"
          )
          assert.strictEqual(read(row, "deps/log"), "update-base\nupdate-one\n", "updateContent ran again on the PR")
          assert.notInclude(sparesIn(home), spare, "taken")
          yield* (yield* PrebuildSpares).settled
          const [next] = sparesIn(home)
          assert.match(next ?? "", new RegExp(`^${prebuild}\\.[0-9a-f]+$`), "another made behind it")
          assert.notStrictEqual(next, spare)

          // None ready (removed here): the open copies the prebuild beside its container's start.
          rmSync(join(statePaths(home).spares, next ?? ""), { recursive: true, force: true })
          pushPullRequest(remote.path, 2, { "pr.txt": "two" })
          const copied = yield* openRunning(remote.path, 2)
          assert.include((yield* logLines(copied.id)).join("\n"), "its files are copied in while its container starts")
          assert.strictEqual(read(copied, "deps/log"), "update-base\nupdate-two\n")
          yield* (yield* PrebuildSpares).settled
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    300_000
  )

  it.live(
    "reconcile removes a half-made spare and the spares of a prebuild not ready; a ready prebuild's stays",
    () =>
      withEngine({ config: { prebuilds: { maxGiB: 10, keepDays: 7 } } }, ({ home, remote }) =>
        Effect.gen(function* () {
          const { prebuild } = yield* prebuiltRemote(remote.path)
          const [kept] = sparesIn(home)
          const spares = statePaths(home).spares
          // What a daemon killed mid-copy leaves, and a spare of a prebuild gc removed meanwhile.
          const halfMade = `${prebuild}.0a0b0c.partial`
          const orphan = "pbgonegonegone.0d0e0f"
          mkdirSync(join(spares, halfMade, "sealed", "workspace"), { recursive: true })
          mkdirSync(join(spares, orphan, "sealed", "home"), { recursive: true })
          const report = yield* (yield* PrebuildCleanup).reconcile()
          assert.deepStrictEqual(report.failures, [])
          assert.includeMembers([...report.changes], [`${prebuild}: spare removed`, "pbgonegonegone: spare removed"])
          assert.deepStrictEqual(sparesIn(home), [kept ?? ""])
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    300_000
  )
})

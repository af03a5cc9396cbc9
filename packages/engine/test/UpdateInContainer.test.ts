import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { movePullRequest } from "../../git/test/helpers.ts"
import { type ContainerRuntimeShape, SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { openRunning, rowOf, withEngine } from "./harness.ts"
import { refusesOverUncommittedChanges } from "./update-fixtures.ts"

/**
 * The engine keeps the sandbox's files, as a remote one does: the container's
 * workspace is a copy made at create (handed to the sandbox's user, as a
 * filled volume is), not the host's workspace, which goes stale. The copy is
 * bind-mounted only so that the test can read it.
 */
const filesOnEngine = (real: ContainerRuntimeShape): ContainerRuntimeShape => ({
  ...real,
  filesAt: Effect.succeed("engine"),
  provision: (spec) =>
    Effect.suspend(() => {
      const carried = (spec.carried ?? []).map((folder) => {
        if (folder.kind !== "workspace") return folder
        const copy = engineCopyOf(folder.hostPath)
        execFileSync("cp", ["-a", folder.hostPath, copy])
        execFileSync("chown", ["-R", spec.user, copy])
        return { ...folder, hostPath: copy }
      })
      return real.provision({ ...spec, carried })
    })
})

/** An engine that keeps the files, its sandboxes on an image with git. */
const onEngineWithGit = <A, E>(body: Parameters<typeof withEngine<A, E>>[1]) =>
  withEngine({ runtime: filesOnEngine, config: { image: healthzGitImage() } }, body)

const engineCopyOf = (workspacePath: string) => `${workspacePath}.engine`

/** git in a workspace folder as root (the test's), whoever owns it. */
const gitIn = (folder: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-c", `safe.directory=${folder}`, ...args], { cwd: folder, encoding: "utf8" }).trim()

/** The host's workspace and the container's copy, with the uid the sandbox runs as. */
const copiesOf = (row: Sandbox) => {
  const host = row.workspacePath ?? assert.fail("no workspace")
  const engine = engineCopyOf(host)
  return { host, engine, uid: statSync(engine).uid }
}

/** Files of the container's copy that the sandbox's user does not own (what git as anyone else would leave). */
const notOwnedBy = (folder: string, uid: number): Array<string> =>
  execFileSync("find", [folder, "!", "-uid", String(uid)], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

/** What the host's workspace is made of, to compare before and after: head, refs, status, object count. */
const snapshot = (folder: string) => ({
  head: gitIn(folder, "rev-parse", "HEAD"),
  refs: gitIn(folder, "for-each-ref", "--format=%(objectname) %(refname)"),
  status: gitIn(folder, "status", "--porcelain=v1", "--untracked-files=all"),
  objects: gitIn(folder, "count-objects", "-v")
})

describe("update where the engine keeps the workspace (git in the container)", () => {
  it.live("fast-forwards the container's copy, then is up to date; the host's copy is not touched", () =>
    onEngineWithGit(({ home, remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const { host, engine, uid } = copiesOf(running)
        assert.notStrictEqual(uid, 0)
        // A host copy that git there would refuse to update: uncommitted changes.
        writeFileSync(join(host, "host-only.txt"), "on the host\n")
        const before = snapshot(host)
        const next = movePullRequest(home, remote.pr1, "next.txt")

        const report = yield* sandboxes.update(running.id, { force: false })
        assert.strictEqual(report.outcome, "fast-forwarded")
        assert.strictEqual(report.from, remote.pr1)
        assert.strictEqual(report.to, next)
        assert.strictEqual((yield* rowOf(running.id)).sourceCommit, next)
        assert.strictEqual(gitIn(engine, "rev-parse", "HEAD"), next)
        assert.strictEqual(readFileSync(join(engine, "next.txt"), "utf8"), "next.txt\n")
        // git ran as the sandbox's user: nothing it wrote (objects, index, files) is anyone else's.
        assert.deepStrictEqual(notOwnedBy(engine, uid), [])
        assert.deepStrictEqual(snapshot(host), before)
        assert.isFalse(existsSync(join(host, "next.txt")))

        const again = yield* sandboxes.update(running.id, { force: false })
        assert.strictEqual(again.outcome, "up-to-date")
        assert.strictEqual(gitIn(engine, "rev-parse", "HEAD"), next)
        assert.deepStrictEqual(snapshot(host), before)
      })
    )
  )

  it.live("refuses on uncommitted changes in the container's copy (not the host's), touching nothing", () =>
    onEngineWithGit((fixture) =>
      Effect.gen(function* () {
        const running = yield* openRunning(fixture.remote.path, 1)
        const { host, engine } = copiesOf(running)
        const before = snapshot(host)
        yield* refusesOverUncommittedChanges(running, engine, fixture, () => gitIn(engine, "rev-parse", "HEAD"))
        assert.deepStrictEqual(snapshot(host), before)
      })
    )
  )

  it.live("refuses a force-push without --force; --force keeps the old head on a branch in the container's copy", () =>
    onEngineWithGit(({ home, remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const { host, engine, uid } = copiesOf(running)
        const before = snapshot(host)
        const rewritten = movePullRequest(home, remote.main, "rewritten.txt")

        const refused = yield* Effect.flip(sandboxes.update(running.id, { force: false }))
        assert.strictEqual(refused._tag, "UpdateRefused")
        assert.include(refused.message, "the PR was force-pushed")
        assert.include(refused.message, "keeps your commits on prbox/before-update-1")
        assert.strictEqual(gitIn(engine, "rev-parse", "HEAD"), remote.pr1)

        const forced = yield* sandboxes.update(running.id, { force: true })
        assert.strictEqual(forced.outcome, "forced")
        assert.strictEqual(forced.keptBranch, "prbox/before-update-1")
        assert.strictEqual(gitIn(engine, "rev-parse", "refs/heads/prbox/before-update-1"), remote.pr1)
        assert.strictEqual(gitIn(engine, "rev-parse", "HEAD"), rewritten)
        assert.strictEqual(readFileSync(join(engine, "rewritten.txt"), "utf8"), "rewritten.txt\n")
        assert.deepStrictEqual(notOwnedBy(engine, uid), [])
        assert.strictEqual((yield* rowOf(running.id)).sourceCommit, rewritten)
        assert.deepStrictEqual(snapshot(host), before)
      })
    )
  )

  it.live("refuses clearly when the sandbox's image has no git", () =>
    withEngine({ runtime: filesOnEngine }, ({ home, remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const { engine } = copiesOf(running)
        movePullRequest(home, remote.pr1, "next.txt")

        const refused = yield* Effect.flip(sandboxes.update(running.id, { force: false }))
        assert.strictEqual(refused._tag, "UpdateRefused")
        assert.include(refused.message, "the sandbox's image has no git")
        assert.strictEqual(gitIn(engine, "rev-parse", "HEAD"), remote.pr1)
        assert.strictEqual((yield* rowOf(running.id)).sourceCommit, remote.pr1)
      })
    )
  )
})

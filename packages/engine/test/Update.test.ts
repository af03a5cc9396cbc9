import { execFileSync } from "node:child_process"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { movePullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { bounded, containersOf, openRunning, rowOf, withEngine } from "./harness.ts"
import { refusesOverUncommittedChanges } from "./update-fixtures.ts"

/** git in a sandbox's workspace (the sandbox user's, not the test's). */
const inWorkspace = (row: Sandbox, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-c", `safe.directory=${row.workspacePath}`, ...args], {
    cwd: row.workspacePath ?? "/",
    encoding: "utf8"
  }).trim()

const progressLines = (row: Sandbox) =>
  Effect.flatMap(SandboxService, (sandboxes) => sandboxes.logs(row.id, { limit: 10_000 })).pipe(
    Effect.map((events) => events.flatMap((event) => (event._tag === "Progress" ? [event.line] : [])))
  )

/** `update` runs git in the sandbox: its image has git. */
const gitImage = { config: { image: healthzGitImage() } }

describe("update", () => {
  it.live("fast-forwards a running sandbox's workspace to the PR's new head, then is up to date", () =>
    withEngine(gitImage, ({ home, remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const next = movePullRequest(home, remote.pr1, "next.txt")

        const report = yield* sandboxes.update(running.id, { force: false })
        assert.strictEqual(report.outcome, "fast-forwarded")
        assert.strictEqual(report.from, remote.pr1)
        assert.strictEqual(report.to, next)
        assert.isNull(report.keptBranch)
        assert.deepStrictEqual(report.updateContent, { ran: true, error: null })
        assert.strictEqual(report.sandbox.sourceCommit, next)
        assert.strictEqual((yield* rowOf(running.id)).sourceCommit, next)
        assert.strictEqual((yield* rowOf(running.id)).status, "running")
        assert.strictEqual(inWorkspace(running, "rev-parse", "HEAD"), next)
        const added = join(running.workspacePath ?? "", "next.txt")
        assert.strictEqual(readFileSync(added, "utf8"), "next.txt\n")
        // What git wrote (in the sandbox, as its user) belongs to the sandbox's user.
        assert.strictEqual(statSync(added).uid, statSync(running.workspacePath ?? "").uid)
        const lines = yield* progressLines(running)
        assert.include(lines, "fetching the PR's head")
        assert.include(lines, `fast-forwarded ${remote.pr1.slice(0, 7)}..${next.slice(0, 7)}`)

        const again = yield* sandboxes.update(running.id, { force: false })
        assert.strictEqual(again.outcome, "up-to-date")
        assert.deepStrictEqual(again.updateContent, { ran: false, error: null })
      })
    )
  )

  it.live("refuses on a dirty workspace with its files listed, and touches nothing", () =>
    withEngine(gitImage, (fixture) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(fixture.remote.path, 1)
        yield* refusesOverUncommittedChanges(running, running.workspacePath ?? "", fixture, () =>
          inWorkspace(running, "rev-parse", "HEAD")
        )

        // A stopped sandbox is not updated: it is started first.
        yield* sandboxes.stop(running.id)
        const stopped = yield* Effect.flip(sandboxes.update(running.id, { force: false }))
        assert.strictEqual(stopped._tag, "SandboxConflict")
        assert.include(stopped.message, `prbox restart ${running.id}`)
      })
    )
  )

  it.live("refuses a force-push without --force; --force keeps the old head on prbox/before-update-1", () =>
    withEngine(gitImage, ({ home, remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const rewritten = movePullRequest(home, remote.main, "rewritten.txt")

        const refused = yield* Effect.flip(sandboxes.update(running.id, { force: false }))
        assert.strictEqual(refused._tag, "UpdateRefused")
        assert.include(refused.message, "the PR was force-pushed")
        assert.include(refused.message, `${remote.pr1.slice(0, 7)}..${rewritten.slice(0, 7)} is not a fast-forward`)
        assert.include(
          refused.message,
          `\`prbox update --force ${running.id}\` keeps your commits on prbox/before-update-1`
        )
        assert.strictEqual(inWorkspace(running, "rev-parse", "HEAD"), remote.pr1)

        const forced = yield* sandboxes.update(running.id, { force: true })
        assert.strictEqual(forced.outcome, "forced")
        assert.strictEqual(forced.keptBranch, "prbox/before-update-1")
        assert.strictEqual(inWorkspace(running, "rev-parse", "refs/heads/prbox/before-update-1"), remote.pr1)
        assert.strictEqual(inWorkspace(running, "rev-parse", "HEAD"), rewritten)
        assert.strictEqual((yield* rowOf(running.id)).sourceCommit, rewritten)
      })
    )
  )
})

describe("rebuild", () => {
  it.live("makes a new container on the same port and workspace, and runs the create-time steps again", () =>
    withEngine({ config: { setupCommands: ["echo run >> runs.txt"] } }, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const workspace = running.workspacePath ?? ""
        writeFileSync(join(workspace, "mine.txt"), "kept\n")

        const rebuilding = yield* sandboxes.rebuild(running.id)
        assert.strictEqual(rebuilding.status, "starting")
        assert.isNull(rebuilding.containerId)
        yield* sandboxes.awaitIdle(running.id).pipe(bounded("the rebuild did not finish"))
        const rebuilt = yield* rowOf(running.id)
        assert.strictEqual(rebuilt.status, "running", rebuilt.error ?? "")
        assert.notStrictEqual(rebuilt.containerId, running.containerId)
        assert.strictEqual(rebuilt.hostPort, running.hostPort)
        assert.strictEqual(rebuilt.workspacePath, workspace)
        assert.deepStrictEqual(containersOf(running.id, { all: true }), [rebuilt.containerId])
        assert.strictEqual(readFileSync(join(workspace, "mine.txt"), "utf8"), "kept\n")
        assert.strictEqual(readFileSync(join(workspace, "runs.txt"), "utf8"), "run\nrun\n")
        assert.include(yield* progressLines(running), "rebuilding: a new container on the kept workspace")
      })
    )
  )
})

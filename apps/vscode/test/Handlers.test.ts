import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { PullRequestNumber, SandboxId } from "@prbox/domain"
import { SandboxRepo, layer as sqliteRepo } from "@prbox/store"
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { healthzGitImage } from "../../../packages/engine/test/git-image.ts"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { prbox, tearDown } from "../../cli/test/support.ts"
import { makeHome, type Daemon as Prboxd, startDaemon, until } from "../../daemon/test/support.ts"
import { changedFileNode } from "../src/ChangeNodes.ts"
import { ChangedFiles, sideText } from "../src/Changes.ts"
import { Daemon, DaemonError } from "../src/Daemon.ts"
import { commandTable, parseOpenInput } from "../src/Handlers.ts"
import { LogFollowers } from "../src/Logs.ts"
import { CommandId, sandboxNode, statusBar } from "../src/Model.ts"
import type { SandboxView } from "../src/Protocol.ts"
import { resolveSettings } from "../src/Settings.ts"
import { RecordingSink, RecordingUi } from "./support.ts"

const CLI_BIN = fileURLToPath(new URL("../../cli/bin/prbox", import.meta.url))
/** Start Daemon runs the `prboxd` executable (setting prbox.daemonPath). */
const DAEMON_BIN = fileURLToPath(new URL("../../daemon/bin/prboxd", import.meta.url))
const SEEDED = SandboxId.make("bbbbbbbbbbb1")

let home: string
let remote: TestRemote
let prboxd: Prboxd
let daemon: Daemon
let logs: LogFollowers
const sinks: Array<RecordingSink> = []
const dirs: Array<string> = []
let pr1: SandboxView

/** A sandbox that failed long ago: gc's to delete. Written before the daemon starts. */
const seedEnded = (stateDir: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const repo = yield* SandboxRepo
      yield* repo.insert({
        id: SEEDED,
        provider: "github",
        host: "github.com",
        account: "",
        repository: "o/r",
        pullRequest: PullRequestNumber.make(201),
        accessPassword: Redacted.make("seeded"),
        createdAt: 1,
        lastActivityAt: 1
      })
      yield* repo.updateStatus(SEEDED, { to: "error", error: "seeded", stoppedAt: 1 })
    }).pipe(Effect.provide(sqliteRepo({ stateDir })))
  )

beforeAll(async () => {
  // gc only when asked: the timer must not collect the seeded row first.
  // "Update to the PR's Head" runs git in the sandbox: an image with git.
  home = makeHome("vscode", { gcIntervalMinutes: 1440, image: healthzGitImage() })
  await seedEnded(home)
  remote = makeRemote(home)
  prboxd = await startDaemon(home)
  daemon = new Daemon(resolveSettings({ home, cliPath: CLI_BIN, daemonPath: DAEMON_BIN }))
  logs = new LogFollowers(daemon, (name) => {
    const sink = new RecordingSink(name)
    sinks.push(sink)
    return sink
  })
  daemon.watch()
})

afterAll(async () => {
  logs?.dispose()
  await daemon?.dispose()
  await prboxd?.stop()
  // Also stops the daemon Start Daemon started (by the pid in its lock), and removes containers and the home.
  if (home !== undefined) await tearDown(home)
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The command table as VS Code registers it, with a fresh recording UI. */
const editor = () => {
  const ui = new RecordingUi()
  const table = new Map(commandTable({ ui, daemon, logs, baseDir: () => home }))
  const run = async (id: CommandId, argument?: unknown) => {
    const handler = table.get(id)
    if (handler === undefined) throw new Error(`no handler for ${id}`)
    await handler(argument)
  }
  return { ui, run }
}

const get = (id: SandboxId) => daemon.call((client) => client.get(id))
const listed = (id: SandboxId) => daemon.views.find((view) => view.id === id)

const runFile = (file: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<string>((resolve, reject) =>
    execFile(file, args, { env: { ...process.env, ...env }, encoding: "utf8" }, (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${error.message}: ${stderr}`))
    )
  )

describe("reading Open PR Sandbox's input like `prbox open`", () => {
  it("passes URLs and owner/repo#N through, and reads --pr and --ref", () => {
    expect(parseOpenInput("https://github.com/o/r/pull/7", "/x")).toEqual({
      _tag: "ok",
      request: { input: "https://github.com/o/r/pull/7" }
    })
    expect(parseOpenInput("  o/r#7 ", "/x")).toEqual({ _tag: "ok", request: { input: "o/r#7" } })
    expect(parseOpenInput("git@host:o/r.git --pr 3 --ref=refs/heads/x", "/x")).toEqual({
      _tag: "ok",
      request: { input: "git@host:o/r.git", pr: 3, ref: "refs/heads/x" }
    })
  })

  it("makes a local path absolute against the workspace", () => {
    expect(parseOpenInput("/abs/repo.git --pr=2", "/x")).toEqual({
      _tag: "ok",
      request: { input: "/abs/repo.git", pr: 2 }
    })
  })

  it("says what is wrong with a bad line", () => {
    expect(parseOpenInput("o/r.git --pr two", "/x")).toEqual({
      _tag: "invalid",
      message: '--pr needs a pull request number, not "two"'
    })
    expect(parseOpenInput("--pr", "/x")).toMatchObject({ _tag: "invalid", message: "--pr needs a value" })
    expect(parseOpenInput("a b", "/x")).toMatchObject({ _tag: "invalid", message: expect.stringContaining("one pull") })
    expect(parseOpenInput("--pr 1", "/x")).toMatchObject({ _tag: "invalid" })
  })
})

describe("command handlers against a real daemon", () => {
  it("the view lists the daemon's rows", async () => {
    await until("the seeded row to be listed", () => daemon.connection._tag === "up" && listed(SEEDED) !== undefined)
  })

  it("Open PR Sandbox… opens a git path with --pr and follows its phases until it runs", async () => {
    const { ui, run } = editor()
    ui.inputs = [`${remote.path} --pr 1`]
    await run(CommandId.open)
    expect(ui.errors).toEqual([])
    const views = await daemon.call((client) => client.list())
    const found = views.find((view) => view.pullRequest === 1)
    expect(found?.status).toBe("running")
    pr1 = found ?? pr1
    const [notification] = ui.notifications
    expect(notification?.title).toBe(`Opening ${remote.path} --pr 1`)
    const phases = ["cloning…", "starting…", "running…"].map((phase) => notification?.messages.indexOf(phase) ?? -1)
    expect(
      phases.every((position) => position >= 0),
      notification?.messages.join("\n")
    ).toBe(true)
    expect([...phases].sort((a, b) => a - b)).toEqual(phases)
    expect(ui.infos).toEqual([`Sandbox #1 (remote) is running at ${pr1.url}.`])
    await until("the view to show it running", () => listed(pr1.id)?.status === "running")
  })

  it("a relative path is read against the workspace, and a running PR comes back at once", async () => {
    const { ui, run } = editor()
    ui.inputs = ["remote.git --pr 1"]
    await run(CommandId.open)
    expect(ui.errors).toEqual([])
    expect(ui.infos).toEqual([`Sandbox #1 (remote) is running at ${pr1.url}.`])
    const views = await daemon.call((client) => client.list())
    expect(views.filter((view) => view.pullRequest === 1)).toHaveLength(1)
  })

  it("a bad input line is refused before the daemon is asked", async () => {
    const { ui, run } = editor()
    ui.inputs = ["remote.git --pr two"]
    await run(CommandId.open)
    expect(ui.errors).toEqual(['Open PR Sandbox: --pr needs a pull request number, not "two"'])
    expect(ui.notifications).toEqual([])
  })

  it("Open in Browser and Copy Password act on the tree item they were invoked on", async () => {
    const { ui, run } = editor()
    const node = sandboxNode(pr1, Date.now())
    await run(CommandId.openInBrowser, node)
    expect(ui.opened).toEqual([pr1.url])
    await run(CommandId.copyPassword, node)
    const secret = await daemon.call((client) => client.password(pr1.id))
    expect(ui.copied).toEqual([secret.password])
    expect(ui.errors).toEqual([])
  })

  it("Open in VS Code Desktop opens prbox's SSH host for the sandbox at its workspace folder", async () => {
    const { ui, run } = editor()
    expect(pr1.workspaceFolder).toMatch(/^\//)
    await run(CommandId.openInDesktop, sandboxNode(pr1, Date.now()))
    expect(ui.opened).toEqual([`vscode://vscode-remote/ssh-remote+${pr1.id}.prbox${pr1.workspaceFolder}`])
    expect(ui.errors).toEqual([])
  })

  it("Changed Files lists the PR's own changes; a file opens a diff whose sides the daemon reads", async () => {
    const { ui, run } = editor()
    const files = await new ChangedFiles(daemon).list(pr1.id, pr1.sourceCommit)
    expect(files).toEqual([{ path: "pr1.txt", change: "added" }])
    const [file] = files
    if (file === undefined) throw new Error("no changed file")
    await run(CommandId.openChange, changedFileNode(pr1.id, file))
    const [shown] = ui.diffs
    expect(shown?.title).toBe("pr1.txt (PR: base ↔ head)")
    if (shown === undefined) throw new Error("no diff shown")
    // Added by the PR: nothing at the merge-base, the PR's text at its head.
    expect(await sideText(daemon, shown.left)).toBe("")
    expect(await sideText(daemon, shown.right)).toBe("pr1.txt\n")
    await run(CommandId.openChange)
    expect(ui.errors).toEqual(["Pick a file under a sandbox's Changed Files to see its diff."])
  })

  it("Show Logs replays the log into an output channel and keeps following it", async () => {
    const { ui, run } = editor()
    await run(CommandId.showLogs, pr1.id)
    expect(ui.errors).toEqual([])
    const sink = sinks.find((candidate) => candidate.name.includes(pr1.id))
    expect(sink?.shown).toBe(1)
    await until(
      "the log to reach running",
      () => sink?.lines.some((line) => line.endsWith(" status: running")) === true
    )
    expect(sink?.lines[0]).toMatch(/^\d\d:\d\d:\d\d /)
  })

  it("Exec in Terminal opens a terminal running `prbox exec`", async () => {
    const { ui, run } = editor()
    ui.inputs = ["cat pr1.txt"]
    await run(CommandId.execInTerminal, pr1.id)
    expect(ui.terminals).toEqual([
      {
        name: "prbox exec #1",
        shellPath: CLI_BIN,
        shellArgs: ["exec", pr1.id, "--", "sh", "-c", "cat pr1.txt"],
        env: { PRBOX_HOME: home }
      }
    ])
    // What the terminal would run, run here: the sandbox's checkout answers.
    const [terminal] = ui.terminals
    if (terminal === undefined) throw new Error("no terminal")
    expect(await runFile(terminal.shellPath, terminal.shellArgs, { ...terminal.env })).toBe("pr1.txt\n")
  })

  it("Stop from the palette picks the sandbox; the daemon, the view and the log follow", async () => {
    const { ui, run } = editor()
    ui.pickSandbox = pr1.id
    await run(CommandId.stop)
    expect(ui.picks[0]?.map((item) => item.view.id)).toEqual([pr1.id, SEEDED])
    expect((await get(pr1.id)).status).toBe("stopped")
    expect(ui.infos).toEqual(["Sandbox #1 (remote) is stopped."])
    await until("the view to show it stopped", () => listed(pr1.id)?.status === "stopped")
    const sink = sinks.find((candidate) => candidate.name.includes(pr1.id))
    await until(
      "the log to follow the stop",
      () => sink?.lines.some((line) => line.endsWith(" status: stopped")) === true
    )
  })

  it("Restart follows the sandbox back to running", async () => {
    const { ui, run } = editor()
    await run(CommandId.restart, sandboxNode(await get(pr1.id), Date.now()))
    expect(ui.errors).toEqual([])
    expect((await get(pr1.id)).status).toBe("running")
    expect(ui.notifications[0]?.messages).toContain("running…")
    expect(ui.infos[0]).toMatch(/^Sandbox #1 \(remote\) is running at http:\/\/127\.0\.0\.1:\d+\/\.$/)
  })

  it("Update to the PR's Head says the sandbox is up to date", async () => {
    const { ui, run } = editor()
    await run(CommandId.update, sandboxNode(await get(pr1.id), Date.now()))
    expect(ui.errors).toEqual([])
    expect(ui.infos).toEqual([`Sandbox #1 (remote) is up to date at ${remote.pr1.slice(0, 7)}.`])
  })

  it("Push to PR asks a plain remote's branch, lists the commits in a modal, and pushes only once confirmed", async () => {
    const git = (...args: ReadonlyArray<string>) =>
      new Promise<string>((resolve, reject) =>
        execFile("git", [`--git-dir=${remote.path}`, ...args], { encoding: "utf8" }, (error, stdout) =>
          error === null ? resolve(stdout.trim()) : reject(error)
        )
      )
    await git("update-ref", "refs/heads/feature", remote.pr1)
    const commit = await prbox(home, [
      "exec",
      pr1.id,
      "--",
      "sh",
      "-c",
      "echo fix > fix.txt && git add fix.txt && git -c user.name=Editor -c user.email=editor@prbox.invalid commit -q -m 'editor fix'"
    ])
    expect(commit.code, commit.stderr).toBe(0)

    const declined = editor()
    declined.ui.inputs = ["feature"]
    await declined.run(CommandId.push, sandboxNode(await get(pr1.id), Date.now()))
    expect(declined.ui.errors).toEqual([])
    expect(declined.ui.confirms[0]?.message).toBe("Push 1 commit(s) of #1 (remote) to feature?")
    expect(declined.ui.confirms[0]?.detail).toContain("editor fix (Editor <editor@prbox.invalid>)")
    expect(declined.ui.confirms[0]?.detail).toContain("fix.txt")
    expect(await git("rev-parse", "refs/heads/feature")).toBe(remote.pr1)

    const { ui, run } = editor()
    ui.inputs = ["feature"]
    ui.confirmAnswer = true
    await run(CommandId.push, sandboxNode(await get(pr1.id), Date.now()))
    expect(ui.errors).toEqual([])
    expect(ui.infos[0]).toMatch(/^Pushed 1 commit\(s\) to feature of /)
    expect(await git("rev-parse", "refs/heads/feature")).toBe((await get(pr1.id)).sourceCommit)
  })

  it("Rebuild Container follows the new container to running, on the same URL", async () => {
    const before = await get(pr1.id)
    const { ui, run } = editor()
    await run(CommandId.rebuild, sandboxNode(before, Date.now()))
    expect(ui.errors).toEqual([])
    const after = await get(pr1.id)
    expect(after.status).toBe("running")
    expect(after.containerId).not.toBe(before.containerId)
    expect(after.url).toBe(before.url)
    expect(ui.infos[0]).toMatch(/^Sandbox #1 \(remote\) is running at http:\/\/127\.0\.0\.1:\d+\/\.$/)
  })

  it("a change made elsewhere reaches the view through the event stream", async () => {
    const stopped = await prbox(home, ["stop", pr1.id])
    expect(stopped.code, stopped.stderr).toBe(0)
    // Well inside the 30 s periodic refresh: only the event stream can have told it.
    await until("the view to show the CLI's stop", () => listed(pr1.id)?.status === "stopped", { timeoutMs: 10_000 })
  })

  it("Cancel on the progress notification stops the sandbox being opened", async () => {
    const { ui, run } = editor()
    ui.inputs = [`${remote.path} --pr 2`]
    ui.cancelWhen = (message) => message !== "asking prboxd…"
    await run(CommandId.open)
    expect(ui.errors).toEqual([])
    const pr2 = (await daemon.call((client) => client.list({ all: true }))).find((view) => view.pullRequest === 2)
    expect(pr2?.status).toBe("stopped")
    expect(ui.infos).toEqual(["Cancelled: sandbox #2 (remote) is stopped."])
    expect(ui.notifications[0]?.messages.at(-1)).toBe("cancelled: stopping…")
  })

  it("Delete asks first, and deletes only when confirmed", async () => {
    const pr2 = (await daemon.call((client) => client.list({ all: true }))).find((view) => view.pullRequest === 2)
    if (pr2 === undefined) throw new Error("no PR 2 sandbox")
    const refused = editor()
    await refused.run(CommandId.delete, pr2.id)
    expect(refused.ui.confirms).toEqual([
      {
        message: "Delete sandbox #2 (remote)?",
        detail: "Its container, workspace and state are removed; uncommitted work in it is lost."
      }
    ])
    expect((await get(pr2.id)).status).toBe("stopped")

    const confirmed = editor()
    confirmed.ui.confirmAnswer = true
    await confirmed.run(CommandId.delete, pr2.id)
    expect(confirmed.ui.infos).toEqual(["Deleted sandbox #2 (remote)."])
    const gone = await get(pr2.id).catch((error: unknown) => error)
    expect(gone).toBeInstanceOf(DaemonError)
    expect(gone).toMatchObject({ tag: "NotFound" })
  })

  it("Run GC shows the dry run first and acts only when confirmed", async () => {
    const declined = editor()
    await declined.run(CommandId.gc)
    expect(declined.ui.confirms).toEqual([
      {
        message: "GC: stop 0 and delete 1 sandbox(es)?",
        detail: `delete #201 o/r (${SEEDED}): ended long ago`
      }
    ])
    expect((await get(SEEDED)).status).toBe("error")

    const accepted = editor()
    accepted.ui.confirmAnswer = true
    await accepted.run(CommandId.gc)
    expect(accepted.ui.infos).toEqual(["GC stopped 0 and deleted 1 sandbox(es)."])
    await expect(get(SEEDED)).rejects.toMatchObject({ tag: "NotFound" })

    const empty = editor()
    await empty.run(CommandId.gc)
    expect(empty.ui.confirms).toEqual([])
    expect(empty.ui.infos).toEqual(["GC: nothing to collect (no idle sandbox, none stopped long ago)."])
  })

  it("a failing call is shown to the user", async () => {
    const { ui, run } = editor()
    await run(CommandId.stop, "zzzzzzzzzzzz")
    expect(ui.errors).toHaveLength(1)
    expect(ui.errors[0]).toMatch(/^prbox: .*zzzzzzzzzzzz/)
  })

  it("a daemon that goes away shows as down, and Start Daemon brings it back", async () => {
    await prboxd.stop()
    await until("the view to see the daemon down", () => daemon.connection._tag === "down")
    expect(statusBar(daemon.connection).text).toBe("$(debug-disconnect) prbox")

    const { ui, run } = editor()
    await run(CommandId.refresh)
    await run(CommandId.stop, pr1.id)
    expect(ui.errors).toEqual([
      `prbox: prboxd is not reachable at ${join(home, "run", "prboxd.sock")} (no daemon socket) (PR Sandboxes › Start Daemon)`
    ])

    await run(CommandId.startDaemon)
    expect(ui.errors).toEqual([ui.errors[0]])
    expect(ui.infos[0]).toMatch(/^prboxd \S+ started \(pid \d+\)$/)
    await until("the view to reconnect", () => daemon.connection._tag === "up" && listed(pr1.id) !== undefined)
  })

  it("new settings take effect without a reload", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "prbox-vscode-empty-"))
    dirs.push(elsewhere)
    await daemon.retarget(resolveSettings({ home: elsewhere, cliPath: CLI_BIN }))
    await until("the view to see no daemon there", () => daemon.connection._tag === "down")
    expect(daemon.connection).toMatchObject({ message: expect.stringContaining(elsewhere) })
    await daemon.retarget(resolveSettings({ home, cliPath: CLI_BIN, daemonPath: DAEMON_BIN }))
    await until("the view to be back", () => daemon.connection._tag === "up" && listed(pr1.id) !== undefined)
  })
})

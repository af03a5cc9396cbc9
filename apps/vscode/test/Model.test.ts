import { readFileSync } from "node:fs"
import { SandboxId } from "@prbox/domain"
import { describe, expect, it } from "vitest"
import { desktopUri } from "../src/Access.ts"
import {
  age,
  CommandId,
  nameOf,
  pickItem,
  progressMessage,
  repoOf,
  sandboxNode,
  sandboxNodes,
  sortSandboxes,
  statusBar,
  statusIcon,
  VIEW_ID
} from "../src/Model.ts"
import type { SandboxStatus } from "../src/Protocol.ts"
import { viewOf } from "./support.ts"

const now = 1_000_000 + 5 * 60_000

describe("tree items from protocol rows", () => {
  it("is labelled by the PR's title, described by its number, repository and status", () => {
    const node = sandboxNode(viewOf(), now)
    expect(node).toMatchObject({
      kind: "sandbox",
      id: "aaaaaaaaaaa1",
      label: "Fix the parser",
      description: "#12 · owner/repo · running",
      contextValue: "sandbox.running"
    })
    expect(node.tooltip).toContain("url: http://127.0.0.1:40001/")
    expect(node.tooltip).toContain("commit: 0123456789ab")
  })

  it("marks a merged or closed PR, with its author, state and base branch in the tooltip", () => {
    const fields = { author: "octocat", baseRef: "main", closedSeenAt: now - 3 * 3_600_000 }
    const merged = sandboxNode(viewOf({ ...fields, pullRequestState: "merged", status: "stopped" }), now)
    expect(merged.description).toBe("#12 · owner/repo · stopped · merged")
    expect(merged.tooltip).toContain("\nauthor: octocat\npull request: merged (first seen 3h ago)\nbase branch: main\n")
    const closed = sandboxNode(viewOf({ pullRequestState: "closed", setupError: "setup [1/1] failed" }), now)
    expect(closed.description).toBe("#12 · owner/repo · running (setup failed) · closed")
    const open = sandboxNode(viewOf({ pullRequestState: "open" }), now)
    expect(open.description).toBe("#12 · owner/repo · running")
    expect(open.tooltip).toContain("\npull request: open\n")
    expect(pickItem(viewOf({ pullRequestState: "merged" }), now).description).toBe("running · merged · owner/repo · 5m")
  })

  it("shows a title's control characters as spaces, in the label and the pickers", () => {
    const view = viewOf({ title: "Fix\nthe\u001b[2J parser\u202e" })
    expect(sandboxNode(view, now).label).toBe("Fix the [2J parser")
    expect(pickItem(view, now).label).toBe("#12 Fix the [2J parser")
  })

  it("says which environment the sandbox got", () => {
    const environment = {
      kind: "devcontainer" as const,
      path: ".devcontainer/devcontainer.json",
      image: "prbox-build/repo:abc",
      imageDigest: "sha256:1"
    }
    const node = sandboxNode(viewOf({ environment }), now)
    expect(node.tooltip).toContain(
      "environment: devcontainer (.devcontainer/devcontainer.json), image prbox-build/repo:abc"
    )
    expect(sandboxNode(viewOf(), now).tooltip).not.toContain("environment:")
  })

  it("leaves out what the daemon does not know", () => {
    const node = sandboxNode(viewOf({ title: null, sourceBranch: null, status: "creating", url: null }), now)
    // The number is the label until the title is known, and is not said twice.
    expect(node.label).toBe("#12")
    expect(node.description).toBe("owner/repo · creating")
    expect(node.tooltip).not.toMatch(/^(author|pull request|base branch):/m)
    expect(node.tooltip).not.toContain("url:")
  })

  it("names the repository by host: bare on github.com, with its host elsewhere, by directory when local", () => {
    expect(repoOf(viewOf())).toBe("owner/repo")
    expect(repoOf(viewOf({ host: "gitlab.example.com", repository: "group/app" }))).toBe("gitlab.example.com/group/app")
    expect(repoOf(viewOf({ provider: "git", host: "local", repository: "/tmp/x/remote.git" }))).toBe("remote")
  })

  it("shows the error and the last step of a failed sandbox in the tooltip", () => {
    const node = sandboxNode(viewOf({ status: "error", error: "clone failed", detail: "[1/2] npm ci" }), now)
    expect(node.tooltip).toContain("error: clone failed")
    expect(node.tooltip).toContain("last step: [1/2] npm ci")
  })

  it("marks a sandbox that runs with a failed setup, with the reason in the tooltip; not while it starts", () => {
    const setupError = "setup [2/3] failed with exit code 3"
    const node = sandboxNode(viewOf({ setupError }), now)
    expect(node.description).toBe("#12 · owner/repo · running (setup failed)")
    expect(node.tooltip).toContain(`setup failed: ${setupError} (Show Logs has its output)`)
    // While a setup runs, the row holds its "did not finish" mark: that is not a failure yet.
    const starting = sandboxNode(viewOf({ status: "starting", setupError: "setup did not finish (interrupted)" }), now)
    expect(starting.description).toBe("#12 · owner/repo · starting")
    expect(starting.tooltip).not.toContain("setup failed")
  })

  it("flags a legacy sandbox without a password, with what to do, in its description and tooltip", () => {
    const legacy = sandboxNode(viewOf({ host: null, hasPassword: false, status: "error", url: null }), now)
    expect(legacy.description).toBe("#12 · owner/repo · error (legacy: delete it)")
    expect(legacy.tooltip).toContain(
      "legacy sandbox without a password: delete it with `prbox rm aaaaaaaaaaa1` and open the PR again"
    )
    expect(sandboxNode(viewOf(), now).tooltip).not.toContain("legacy")
  })

  it("ages in seconds, minutes, hours and days", () => {
    expect([0, 59_000, 60_000, 3_600_000, 86_400_000 * 3].map((ms) => age(0, ms))).toEqual([
      "0s",
      "59s",
      "1m",
      "1h",
      "3d"
    ])
    expect(age(10, 0)).toBe("0s")
  })
})

describe("status icons", () => {
  const cases: Array<[SandboxStatus, string, string | undefined]> = [
    ["running", "vm-running", "charts.green"],
    ["creating", "loading~spin", undefined],
    ["cloning", "loading~spin", undefined],
    ["starting", "loading~spin", undefined],
    ["stopping", "loading~spin", undefined],
    ["stopped", "vm-outline", undefined],
    ["error", "error", "charts.red"]
  ]
  it.each(cases)("%s is %s", (status, id, color) => {
    expect(statusIcon({ status, destroyFenced: false })).toEqual(color === undefined ? { id } : { id, color })
  })

  it("a fenced sandbox warns whatever its status", () => {
    expect(statusIcon({ status: "stopped", destroyFenced: true })).toEqual({ id: "warning", color: "charts.yellow" })
  })
})

describe("sorting", () => {
  it("puts running first, then starting, stopping, failed and stopped; newest first within", () => {
    const views = [
      viewOf({ id: SandboxId.make("stopped00001"), status: "stopped", createdAt: 9 }),
      viewOf({ id: SandboxId.make("error0000001"), status: "error", createdAt: 8 }),
      viewOf({ id: SandboxId.make("running00old"), status: "running", createdAt: 1 }),
      viewOf({ id: SandboxId.make("cloning00001"), status: "cloning", createdAt: 7 }),
      viewOf({ id: SandboxId.make("stopping0001"), status: "stopping", createdAt: 6 }),
      viewOf({ id: SandboxId.make("running00new"), status: "running", createdAt: 2 })
    ]
    expect(sortSandboxes(views).map((view) => view.id)).toEqual([
      "running00new",
      "running00old",
      "cloning00001",
      "stopping0001",
      "error0000001",
      "stopped00001"
    ])
    expect(sandboxNodes(views, now).map((node) => node.id)).toEqual(sortSandboxes(views).map((view) => view.id))
  })

  it("breaks ties by id, so the order never flickers", () => {
    const a = viewOf({ id: SandboxId.make("bbbbbbbbbbbb") })
    const b = viewOf({ id: SandboxId.make("aaaaaaaaaaaa") })
    expect(sortSandboxes([a, b]).map((view) => view.id)).toEqual(["aaaaaaaaaaaa", "bbbbbbbbbbbb"])
  })
})

describe("desktop VS Code", () => {
  it("opens a sandbox through prbox's SSH host, at its workspace folder", () => {
    const view = viewOf({ workspaceFolder: "/workspaces/my repo" })
    expect(desktopUri(view)).toBe("vscode://vscode-remote/ssh-remote+aaaaaaaaaaa1.prbox/workspaces/my%20repo")
    expect(desktopUri(viewOf({ workspaceFolder: null }))).toBe("vscode://vscode-remote/ssh-remote+aaaaaaaaaaa1.prbox")
  })
})

describe("status bar", () => {
  it("counts running sandboxes", () => {
    const views = [viewOf(), viewOf({ status: "stopped" }), viewOf({ status: "running" })]
    expect(statusBar({ _tag: "up", views })).toEqual({
      text: "$(vm-running) 2",
      tooltip: "prbox: 2 running sandboxes (click to show PR Sandboxes)"
    })
    expect(statusBar({ _tag: "up", views: [viewOf()] }).tooltip).toContain("1 running sandbox ")
  })

  it("says when the daemon is down or unusable", () => {
    expect(statusBar({ _tag: "down", message: "no socket" })).toEqual({
      text: "$(debug-disconnect) prbox",
      tooltip: "prbox: no socket"
    })
    expect(statusBar({ _tag: "failed", message: "old daemon" }).text).toBe("$(warning) prbox")
    expect(statusBar({ _tag: "connecting" }).text).toBe("$(loading~spin) prbox")
  })
})

describe("messages", () => {
  it("a status line reads as the phase, other lines with their phase", () => {
    const event = { seq: 1, sandboxId: SandboxId.make("aaaaaaaaaaa1"), at: 0 }
    expect(progressMessage({ ...event, _tag: "StatusChanged", status: "cloning", error: null })).toBe("cloning…")
    expect(progressMessage({ ...event, _tag: "Progress", status: "starting", line: "[1/2] npm ci" })).toBe(
      "starting: [1/2] npm ci"
    )
    // A progress line that looks like a status change is still a progress line.
    expect(progressMessage({ ...event, _tag: "Progress", status: "starting", line: "status: running" })).toBe(
      "starting: status: running"
    )
  })

  it("names a sandbox by PR and repository, or by id when unknown", () => {
    expect(nameOf([viewOf()], SandboxId.make("aaaaaaaaaaa1"))).toBe("#12 owner/repo (aaaaaaaaaaa1)")
    expect(nameOf([], SandboxId.make("aaaaaaaaaaa1"))).toBe("aaaaaaaaaaa1")
  })
})

describe("the manifest", () => {
  const manifest: {
    readonly contributes: {
      readonly commands: ReadonlyArray<{ readonly command: string }>
      readonly views: { readonly prbox: ReadonlyArray<{ readonly id: string }> }
      readonly menus: Record<
        string,
        ReadonlyArray<{ readonly command: string; readonly when?: string; readonly group?: string }>
      >
    }
  } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))

  it("contributes exactly the command table's commands, and menus name only those", () => {
    const table = Object.values(CommandId).sort()
    expect(manifest.contributes.commands.map((entry) => entry.command).sort()).toEqual(table)
    for (const entries of Object.values(manifest.contributes.menus)) {
      for (const entry of entries) expect(table).toContain(entry.command)
    }
  })

  /** Whether a `when` clause of the forms the manifest uses holds for a tree item of this context value. */
  const holds = (when: string, contextValue: string) =>
    when.split(" && ").every((clause) => {
      const [key, operator, value = ""] = clause.split(" ")
      const actual = key === "view" ? VIEW_ID : key === "viewItem" ? contextValue : undefined
      if (operator === "==") return actual === value
      if (operator === "=~") return actual !== undefined && new RegExp(value.slice(1, -1)).test(actual)
      throw new Error(`a clause this test cannot read: ${clause}`)
    })
  /** The commands offered on an item, as inline buttons or in its context menu, in menu order. */
  const offered = (contextValue: string, inline: boolean) =>
    (manifest.contributes.menus["view/item/context"] ?? [])
      .filter((entry) => entry.group?.startsWith("inline") === inline && holds(entry.when ?? "", contextValue))
      .sort((a, b) => (a.group ?? "").localeCompare(b.group ?? ""))
      .map((entry) => entry.command)

  it("a sandbox's actions are buttons and menu entries fitting its status, never child rows", () => {
    const running = "sandbox.running"
    expect(offered(running, true)).toEqual([CommandId.openInBrowser, CommandId.openInDesktop, CommandId.stop])
    expect(offered(running, false)).toEqual([
      CommandId.openInBrowser,
      CommandId.openInDesktop,
      CommandId.copyPassword,
      CommandId.execInTerminal,
      CommandId.showLogs,
      CommandId.stop,
      CommandId.update,
      CommandId.push,
      CommandId.rebuild,
      CommandId.delete
    ])
    for (const status of ["creating", "cloning", "starting"]) {
      expect(offered(`sandbox.${status}`, true)).toEqual([CommandId.stop])
      expect(offered(`sandbox.${status}`, false)).toEqual([CommandId.showLogs, CommandId.stop, CommandId.delete])
    }
    expect(offered("sandbox.stopping", true)).toEqual([])
    expect(offered("sandbox.stopping", false)).toEqual([CommandId.showLogs, CommandId.delete])
    for (const status of ["stopped", "error"]) {
      expect(offered(`sandbox.${status}`, true)).toEqual([CommandId.restart, CommandId.delete])
      expect(offered(`sandbox.${status}`, false)).toEqual([
        CommandId.showLogs,
        CommandId.restart,
        CommandId.rebuild,
        CommandId.delete
      ])
    }
    expect(offered("change.modified", true)).toEqual([CommandId.openChange])
    expect(offered("port.listening", true)).toEqual([CommandId.openPortInBrowser])
    expect(offered("port.closed", true)).toEqual([])
  })

  it("a file's diff opens from the tree only: the palette does not offer it", () => {
    expect(manifest.contributes.menus.commandPalette).toEqual([{ command: CommandId.openChange, when: "false" }])
  })

  it("contributes the view the extension fills", () => {
    expect(manifest.contributes.views.prbox.map((view) => view.id)).toEqual([VIEW_ID])
  })
})

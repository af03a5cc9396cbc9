import {
  age,
  displayText,
  environmentOf,
  legacyWarning,
  markEnded,
  pullRequestStateText,
  pullRequestTitle,
  repoOf,
  setupFailureOf
} from "@prbox/client"
import { type ChangedFile, terminalSafe } from "@prbox/domain"
import type { PortView, SandboxEvent, SandboxId, SandboxStatus, SandboxView } from "./Protocol.ts"

export { age, repoOf }

/**
 * The view model: what the tree, the status bar and the pickers show for the
 * daemon's rows. Plain data, no VS Code types, so it is tested without an
 * editor; `Tree.ts` turns it into `TreeItem`s.
 */

export const VIEW_ID = "prbox.sandboxes"

/** Every command the extension contributes (package.json lists the same ids). */
export const CommandId = {
  open: "prbox.open",
  openInBrowser: "prbox.openInBrowser",
  openInDesktop: "prbox.openInDesktop",
  openChange: "prbox.openChange",
  openPortInBrowser: "prbox.openPortInBrowser",
  copyPassword: "prbox.copyPassword",
  stop: "prbox.stop",
  restart: "prbox.restart",
  update: "prbox.update",
  push: "prbox.push",
  rebuild: "prbox.rebuild",
  delete: "prbox.delete",
  showLogs: "prbox.showLogs",
  execInTerminal: "prbox.execInTerminal",
  refresh: "prbox.refresh",
  gc: "prbox.gc",
  startDaemon: "prbox.startDaemon"
} as const
export type CommandId = (typeof CommandId)[keyof typeof CommandId]

/** What the extension knows about the daemon. */
export type Connection =
  | { readonly _tag: "connecting" }
  | { readonly _tag: "up"; readonly views: ReadonlyArray<SandboxView> }
  /** Nothing answers on the socket. */
  | { readonly _tag: "down"; readonly message: string }
  /** Something answers, but not a daemon this extension can use. */
  | { readonly _tag: "failed"; readonly message: string }

/** A codicon and an optional theme color id. */
export interface Icon {
  readonly id: string
  readonly color?: string
}

export interface SandboxNode {
  readonly kind: "sandbox"
  readonly id: SandboxId
  readonly view: SandboxView
  readonly label: string
  readonly description: string
  readonly tooltip: string
  readonly icon: Icon
  /** `sandbox.<status>`: the `when` clauses of the context menu match on it. */
  readonly contextValue: string
}

/** A port of a running sandbox: its preview opens with Open in Browser. */
export interface PortNode {
  readonly kind: "port"
  readonly id: string
  readonly sandboxId: SandboxId
  readonly port: PortView
  readonly label: string
  readonly description: string
  readonly tooltip: string
  readonly icon: Icon
  /** `port.listening` or `port.closed`: the context menu offers Open in Browser on a listening one. */
  readonly contextValue: string
}

/** A line under a sandbox that says why its ports are not shown. */
export interface NoteNode {
  readonly kind: "note"
  readonly id: string
  readonly label: string
  readonly tooltip: string
  readonly icon: Icon
}

/** A running sandbox's "Changed Files": the PR's own changes, listed when expanded. */
export interface ChangesNode {
  readonly kind: "changes"
  readonly id: string
  readonly sandboxId: SandboxId
  readonly label: string
  readonly tooltip: string
  readonly icon: Icon
}

/** A file the PR changes: opens the diff of its base and head. */
export interface ChangedFileNode {
  readonly kind: "file"
  readonly id: string
  readonly sandboxId: SandboxId
  readonly file: ChangedFile
  readonly label: string
  readonly description: string
  readonly tooltip: string
  readonly icon: Icon
  readonly contextValue: string
}

export type Node = SandboxNode | PortNode | ChangesNode | ChangedFileNode | NoteNode

const inProgress: ReadonlyArray<SandboxStatus> = ["creating", "cloning", "starting"]

export const statusIcon = (view: Pick<SandboxView, "status" | "destroyFenced">): Icon => {
  // A fenced sandbox needs the user (delete retries the destroy), whatever its status says.
  if (view.destroyFenced) return { id: "warning", color: "charts.yellow" }
  switch (view.status) {
    case "running":
      return { id: "vm-running", color: "charts.green" }
    case "creating":
    case "cloning":
    case "starting":
    case "stopping":
      return { id: "loading~spin" }
    case "stopped":
      return { id: "vm-outline" }
    case "error":
      return { id: "error", color: "charts.red" }
  }
}

/** `#12 Fix the parser`, or `#12` while the title is not known: a sandbox in pickers and messages. */
export const titleOf = (view: SandboxView): string => {
  const title = pullRequestTitle(view)
  return title === null ? `#${view.pullRequest}` : `#${view.pullRequest} ${title}`
}

/** The tree's label: the PR's title, or `#12` while it is not known. */
const labelOf = (view: SandboxView): string => pullRequestTitle(view) ?? `#${view.pullRequest}`

/** Running first, then what is on its way, then what needs attention, then what ended; newest first within. */
const rank = (status: SandboxStatus): number =>
  status === "running" ? 0 : inProgress.includes(status) ? 1 : status === "stopping" ? 2 : status === "error" ? 3 : 4

export const sortSandboxes = (views: ReadonlyArray<SandboxView>): Array<SandboxView> =>
  [...views].sort((a, b) => rank(a.status) - rank(b.status) || b.createdAt - a.createdAt || a.id.localeCompare(b.id))

const tooltipOf = (view: SandboxView, now: number): string =>
  [
    `${titleOf(view)} — ${view.host === null ? "" : `${view.host}: `}${view.repository}`,
    view.author === null ? undefined : `author: ${displayText(view.author)}`,
    view.pullRequestState === null ? undefined : `pull request: ${pullRequestStateText(view, now)}`,
    view.baseRef === null ? undefined : `base branch: ${displayText(view.baseRef)}`,
    `status: ${view.status}${view.destroyFenced ? " (fenced: delete it to retry the destroy)" : ""}`,
    legacyWarning(view),
    view.error === null ? undefined : `error: ${view.error}`,
    setupFailureOf(view) === null ? undefined : `setup failed: ${setupFailureOf(view)} (Show Logs has its output)`,
    view.detail === null || view.status === "running" ? undefined : `last step: ${view.detail}`,
    view.sourceBranch === null ? undefined : `branch: ${view.sourceBranch}`,
    view.sourceCommit === null ? undefined : `commit: ${view.sourceCommit.slice(0, 12)}`,
    view.environment === null ? undefined : `environment: ${environmentOf(view)}, image ${view.environment.image}`,
    view.status === "running" && view.url !== null ? `url: ${view.url}` : undefined,
    `id: ${view.id}`,
    `created ${age(view.createdAt, now)} ago`
  ]
    .filter((line) => line !== undefined)
    .map(terminalSafe)
    .join("\n")

/** The status with what needs the user (a setup to fix, a legacy row to delete), then a merged or closed PR. */
const statusText = (view: SandboxView): string => {
  const marks = [
    setupFailureOf(view) === null ? undefined : "setup failed",
    view.hasPassword ? undefined : "legacy: delete it"
  ].filter((mark) => mark !== undefined)
  return markEnded(marks.length === 0 ? view.status : `${view.status} (${marks.join(", ")})`, view)
}

/**
 * A sandbox in the tree: labelled by its PR's title, described as
 * `#12 · owner/repo · running` (the number left out while it is the label).
 */
export const sandboxNode = (view: SandboxView, now: number): SandboxNode => ({
  kind: "sandbox",
  id: view.id,
  view,
  label: labelOf(view),
  description: [pullRequestTitle(view) === null ? undefined : `#${view.pullRequest}`, repoOf(view), statusText(view)]
    .filter((part) => part !== undefined)
    .join(" · "),
  tooltip: tooltipOf(view, now),
  icon: statusIcon(view),
  contextValue: `sandbox.${view.status}`
})

export const sandboxNodes = (views: ReadonlyArray<SandboxView>, now: number): Array<SandboxNode> =>
  sortSandboxes(views).map((view) => sandboxNode(view, now))

const runningCount = (connection: Connection): number =>
  connection._tag === "up" ? connection.views.filter((view) => view.status === "running").length : 0

export interface StatusBarSpec {
  readonly text: string
  readonly tooltip: string
}

export const statusBar = (connection: Connection): StatusBarSpec => {
  switch (connection._tag) {
    case "connecting":
      return { text: "$(loading~spin) prbox", tooltip: "prbox: connecting to prboxd" }
    case "up": {
      const running = runningCount(connection)
      return {
        text: `$(vm-running) ${running}`,
        tooltip: `prbox: ${running} running sandbox${running === 1 ? "" : "es"} (click to show PR Sandboxes)`
      }
    }
    case "down":
      return { text: "$(debug-disconnect) prbox", tooltip: `prbox: ${connection.message}` }
    case "failed":
      return { text: "$(warning) prbox", tooltip: `prbox: ${connection.message}` }
  }
}

/** A progress line for the notification: a status change reads as the phase, other lines with their phase. */
export const progressMessage = (event: SandboxEvent): string =>
  event._tag === "StatusChanged" ? `${event.status}…` : `${event.status}: ${event.line}`

/** `#12 owner/repo (abcdefghijkl)` for messages, or the bare id when the row is not known. */
export const nameOf = (views: ReadonlyArray<SandboxView>, id: SandboxId): string => {
  const view = views.find((candidate) => candidate.id === id)
  return view === undefined ? id : `#${view.pullRequest} ${repoOf(view)} (${id})`
}

/** What a sandbox picker shows for a row. */
export const pickItem = (view: SandboxView, now: number) => ({
  label: titleOf(view),
  description: `${markEnded(view.status, view)} · ${repoOf(view)} · ${age(view.createdAt, now)}`,
  view
})

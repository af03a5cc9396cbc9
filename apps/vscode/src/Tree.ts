import * as vscode from "vscode"
import { changedFileNodes, changesNode, changesUnavailable } from "./ChangeNodes.ts"
import type { ChangedFiles } from "./Changes.ts"
import type { Daemon } from "./Daemon.ts"
import { CommandId, type Node, sandboxNodes } from "./Model.ts"
import { portNodes } from "./PortNodes.ts"
import type { PortWatch } from "./Ports.ts"
import type { SandboxId } from "./Protocol.ts"

const iconOf = (node: Node) =>
  new vscode.ThemeIcon(node.icon.id, node.icon.color === undefined ? undefined : new vscode.ThemeColor(node.icon.color))

/** An item with what every kind of node has: id, icon, and the tooltip and description when it has them. */
const baseItem = (node: Node, collapsible: vscode.TreeItemCollapsibleState): vscode.TreeItem => {
  const item = new vscode.TreeItem(node.label, collapsible)
  item.id = node.id
  item.iconPath = iconOf(node)
  if ("tooltip" in node) item.tooltip = node.tooltip
  if ("description" in node) item.description = node.description
  if ("contextValue" in node) item.contextValue = node.contextValue
  return item
}

const treeItem = (node: Node): vscode.TreeItem => {
  switch (node.kind) {
    case "note":
      return baseItem(node, vscode.TreeItemCollapsibleState.None)
    case "port": {
      const item = baseItem(node, vscode.TreeItemCollapsibleState.None)
      item.accessibilityInformation = { label: `port ${node.label}, ${node.description}` }
      if (node.port.listening) {
        item.command = { command: CommandId.openPortInBrowser, title: "Open in Browser", arguments: [node] }
      }
      return item
    }
    case "changes": {
      const item = baseItem(node, vscode.TreeItemCollapsibleState.Collapsed)
      item.accessibilityInformation = { label: node.label }
      return item
    }
    case "file": {
      const item = baseItem(node, vscode.TreeItemCollapsibleState.None)
      item.accessibilityInformation = { label: `${node.tooltip}` }
      item.command = { command: CommandId.openChange, title: "Open Changes", arguments: [node] }
      return item
    }
    case "sandbox": {
      // Only a running sandbox has things to look at (ports, changed files); what to do is on its buttons and menu.
      const item = baseItem(
        node,
        node.view.status === "running"
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.None
      )
      // Screen readers (and the UI test) read the status with the PR, not just the label.
      item.accessibilityInformation = { label: `${node.label}, ${node.description}` }
      return item
    }
  }
}

/**
 * The "PR Sandboxes" view: one item per sandbox, its actions as inline
 * buttons and context-menu entries (package.json), expanding while it runs
 * to what there is to look at: its ports and the PR's changed files.
 */
export class SandboxTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  readonly #daemon: Daemon
  readonly #ports: PortWatch
  readonly #changes: ChangedFiles
  readonly #changed = new vscode.EventEmitter<undefined>()
  readonly #subscriptions: ReadonlyArray<{ dispose: () => void }>
  readonly onDidChangeTreeData = this.#changed.event

  constructor(daemon: Daemon, ports: PortWatch, changes: ChangedFiles) {
    this.#daemon = daemon
    this.#ports = ports
    this.#changes = changes
    this.#subscriptions = [
      daemon.onDidChange(() => this.#changed.fire(undefined)),
      ports.onDidChange(() => this.#changed.fire(undefined))
    ]
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return treeItem(node)
  }

  async getChildren(node?: Node): Promise<Array<Node>> {
    if (node === undefined) return sandboxNodes(this.#daemon.views, Date.now())
    if (node.kind === "changes") return this.#changedFiles(node.sandboxId)
    if (node.kind !== "sandbox") return []
    // The row as last listed: a node handed out before a change expands to what is true now.
    const view = this.#daemon.views.find((candidate) => candidate.id === node.id) ?? node.view
    if (view.status !== "running") return []
    return [...portNodes(view.id, this.#ports.state(view.id)), changesNode(view.id)]
  }

  async #changedFiles(sandboxId: SandboxId): Promise<Array<Node>> {
    const view = this.#daemon.views.find((candidate) => candidate.id === sandboxId)
    try {
      return changedFileNodes(sandboxId, await this.#changes.list(sandboxId, view?.sourceCommit ?? null))
    } catch (error) {
      return [changesUnavailable(sandboxId, error instanceof Error ? error.message : String(error))]
    }
  }

  dispose(): void {
    for (const subscription of this.#subscriptions) subscription.dispose()
    this.#changed.dispose()
  }
}

import * as vscode from "vscode"
import type { Daemon } from "./Daemon.ts"
import { actionNodes, CommandId, type Node, sandboxNodes } from "./Model.ts"
import { portNodes } from "./PortNodes.ts"
import type { PortWatch } from "./Ports.ts"

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
    case "action": {
      const item = baseItem(node, vscode.TreeItemCollapsibleState.None)
      item.contextValue = "action"
      item.command = { command: node.command, title: node.label, arguments: [node.sandboxId] }
      return item
    }
    case "sandbox": {
      const item = baseItem(node, vscode.TreeItemCollapsibleState.Collapsed)
      // Screen readers (and the UI test) read the status with the PR, not just the label.
      item.accessibilityInformation = { label: `${node.label}, ${node.description}` }
      return item
    }
  }
}

/** The "PR Sandboxes" view: one item per sandbox, expanding to its ports and what can be done with it. */
export class SandboxTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  readonly #daemon: Daemon
  readonly #ports: PortWatch
  readonly #changed = new vscode.EventEmitter<undefined>()
  readonly #subscriptions: ReadonlyArray<{ dispose: () => void }>
  readonly onDidChangeTreeData = this.#changed.event

  constructor(daemon: Daemon, ports: PortWatch) {
    this.#daemon = daemon
    this.#ports = ports
    this.#subscriptions = [
      daemon.onDidChange(() => this.#changed.fire(undefined)),
      ports.onDidChange(() => this.#changed.fire(undefined))
    ]
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return treeItem(node)
  }

  getChildren(node?: Node): Array<Node> {
    if (node === undefined) return sandboxNodes(this.#daemon.views, Date.now())
    if (node.kind !== "sandbox") return []
    // The row as last listed: a node handed out before a change still expands to current actions.
    const view = this.#daemon.views.find((candidate) => candidate.id === node.id) ?? node.view
    const ports = view.status === "running" ? portNodes(view.id, this.#ports.state(view.id)) : []
    return [...ports, ...actionNodes(view)]
  }

  dispose(): void {
    for (const subscription of this.#subscriptions) subscription.dispose()
    this.#changed.dispose()
  }
}

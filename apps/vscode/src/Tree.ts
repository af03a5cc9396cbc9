import * as vscode from "vscode"
import type { Daemon } from "./Daemon.ts"
import { actionNodes, type Node, sandboxNodes } from "./Model.ts"

const iconOf = (node: Node) =>
  new vscode.ThemeIcon(node.icon.id, node.icon.color === undefined ? undefined : new vscode.ThemeColor(node.icon.color))

const treeItem = (node: Node): vscode.TreeItem => {
  if (node.kind === "action") {
    const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None)
    item.id = node.id
    item.iconPath = iconOf(node)
    item.contextValue = "action"
    item.command = { command: node.command, title: node.label, arguments: [node.sandboxId] }
    return item
  }
  const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Collapsed)
  item.id = node.id
  item.description = node.description
  item.tooltip = node.tooltip
  item.iconPath = iconOf(node)
  item.contextValue = node.contextValue
  // Screen readers (and the UI test) read the status with the PR, not just the label.
  item.accessibilityInformation = { label: `${node.label}, ${node.description}` }
  return item
}

/** The "PR Sandboxes" view: one item per sandbox, expanding to what can be done with it. */
export class SandboxTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  readonly #daemon: Daemon
  readonly #changed = new vscode.EventEmitter<undefined>()
  readonly #subscription: { dispose: () => void }
  readonly onDidChangeTreeData = this.#changed.event

  constructor(daemon: Daemon) {
    this.#daemon = daemon
    this.#subscription = daemon.onDidChange(() => this.#changed.fire(undefined))
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return treeItem(node)
  }

  getChildren(node?: Node): Array<Node> {
    if (node === undefined) return sandboxNodes(this.#daemon.views, Date.now())
    if (node.kind === "action") return []
    // The row as last listed: a node handed out before a change still expands to current actions.
    return actionNodes(this.#daemon.views.find((view) => view.id === node.id) ?? node.view)
  }

  dispose(): void {
    this.#subscription.dispose()
    this.#changed.dispose()
  }
}

import { homedir } from "node:os"
import * as vscode from "vscode"
import { Daemon } from "./Daemon.ts"
import { commandTable, type Ui } from "./Handlers.ts"
import { LogFollowers, type LogSink } from "./Logs.ts"
import { type Connection, statusBar, VIEW_ID } from "./Model.ts"
import { resolveSettings } from "./Settings.ts"
import { SandboxTree } from "./Tree.ts"

const readSettings = () => {
  const config = vscode.workspace.getConfiguration("prbox")
  return resolveSettings({
    home: config.get<string>("home"),
    socketPath: config.get<string>("socketPath"),
    cliPath: config.get<string>("cliPath")
  })
}

const vscodeUi = (subscriptions: Array<vscode.Disposable>): Ui => ({
  info: async (message, ...actions) => vscode.window.showInformationMessage(message, ...actions),
  error: (message) => void vscode.window.showErrorMessage(message),
  confirm: async (message, detail, action) =>
    (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action,
  input: async ({ prompt, placeHolder, value }) =>
    vscode.window.showInputBox({
      prompt,
      placeHolder,
      ...(value === undefined ? {} : { value }),
      ignoreFocusOut: true
    }),
  pick: async (items, placeHolder) => vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true }),
  progress: async (title, task) =>
    vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      async (progress, token) => {
        const controller = new AbortController()
        const cancellation = token.onCancellationRequested(() => controller.abort())
        try {
          return await task((message) => progress.report({ message }), controller.signal)
        } finally {
          cancellation.dispose()
        }
      }
    ),
  copy: async (text) => vscode.env.clipboard.writeText(text),
  openExternal: async (url) => {
    await vscode.env.openExternal(vscode.Uri.parse(url))
  },
  terminal: ({ name, shellPath, shellArgs, env }) => {
    const terminal = vscode.window.createTerminal({ name, shellPath, shellArgs: [...shellArgs], env: { ...env } })
    subscriptions.push(terminal)
    terminal.show()
  }
})

const outputSink = (name: string): LogSink => {
  const channel = vscode.window.createOutputChannel(name)
  return {
    append: (line) => channel.appendLine(line),
    show: () => channel.show(true),
    dispose: () => channel.dispose()
  }
}

export const activate = (context: vscode.ExtensionContext): void => {
  try {
    const subscriptions = context.subscriptions
    const daemon = new Daemon(readSettings())
    subscriptions.push({ dispose: () => void daemon.dispose() })

    const logs = new LogFollowers(daemon, outputSink)
    subscriptions.push(logs)

    const tree = new SandboxTree(daemon)
    subscriptions.push(tree, vscode.window.createTreeView(VIEW_ID, { treeDataProvider: tree, showCollapseAll: true }))

    const status = vscode.window.createStatusBarItem("prbox.status", vscode.StatusBarAlignment.Left, 10)
    status.name = "PR Sandboxes"
    status.command = `${VIEW_ID}.focus`
    subscriptions.push(status)
    const render = (connection: Connection) => {
      const spec = statusBar(connection)
      status.text = spec.text
      status.tooltip = spec.tooltip
      status.accessibilityInformation = { label: spec.tooltip }
      status.show()
      // The view's welcome text ("daemon not running" with Start Daemon) is chosen by this key.
      void vscode.commands.executeCommand("setContext", "prbox.daemon", connection._tag)
    }
    render(daemon.connection)
    subscriptions.push(daemon.onDidChange(render))

    const handlerContext = {
      ui: vscodeUi(subscriptions),
      daemon,
      logs,
      baseDir: () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? homedir()
    }
    for (const [id, run] of commandTable(handlerContext)) {
      subscriptions.push(vscode.commands.registerCommand(id, run))
    }

    subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("prbox")) void daemon.retarget(readSettings())
      })
    )
    daemon.watch()
  } catch (error) {
    void vscode.window.showErrorMessage(
      `prbox: the PR Sandboxes extension failed to start: ${error instanceof Error ? error.message : String(error)}`
    )
    throw error
  }
}

import { homedir } from "node:os"
import { terminalSafe } from "@prbox/domain"
import * as vscode from "vscode"
import { ChangedFiles, PR_FILE_SCHEME, parseSideUri, sideText, sideUri } from "./Changes.ts"
import { Ctx } from "./Ctx.ts"
import { Daemon } from "./Daemon.ts"
import { commandTable, type Ui } from "./Handlers.ts"
import { LogFollowers, type LogSink } from "./Logs.ts"
import { type Connection, statusBar, VIEW_ID } from "./Model.ts"
import { PortWatch } from "./Ports.ts"
import { resolveSettings } from "./Settings.ts"
import { SandboxTree } from "./Tree.ts"

const readSettings = () => {
  const config = vscode.workspace.getConfiguration("prbox")
  return resolveSettings({
    home: config.get<string>("home"),
    socketPath: config.get<string>("socketPath"),
    cliPath: config.get<string>("cliPath"),
    daemonPath: config.get<string>("daemonPath")
  })
}

// What the extension shows may quote what a sandbox wrote (errors, step output): made safe first.
const vscodeUi = (ctx: Ctx): Ui => ({
  info: async (message, ...actions) => vscode.window.showInformationMessage(terminalSafe(message), ...actions),
  error: (message) => void vscode.window.showErrorMessage(terminalSafe(message)),
  confirm: async (message, detail, action) =>
    (await vscode.window.showWarningMessage(
      terminalSafe(message),
      { modal: true, detail: terminalSafe(detail) },
      action
    )) === action,
  input: async ({ prompt, placeHolder, value }) =>
    vscode.window.showInputBox({
      prompt,
      placeHolder,
      ...(value === undefined ? {} : { value }),
      ignoreFocusOut: true
    }),
  pick: async (items, placeHolder) => vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true }),
  pickPort: async (items, placeHolder) => vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true }),
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
  diff: async (left, right, title) => {
    await vscode.commands.executeCommand(
      "vscode.diff",
      vscode.Uri.from(sideUri(left)),
      vscode.Uri.from(sideUri(right)),
      title
    )
  },
  terminal: ({ name, shellPath, shellArgs, env }) => {
    const terminal = ctx.own(
      vscode.window.createTerminal({ name, shellPath, shellArgs: [...shellArgs], env: { ...env } })
    )
    terminal.show()
  }
})

const outputSink = (name: string): LogSink => {
  const channel = vscode.window.createOutputChannel(name)
  return {
    append: (line) => channel.appendLine(terminalSafe(line)),
    show: () => channel.show(true),
    dispose: () => channel.dispose()
  }
}

/** Builds the extension inside `ctx`: the daemon connection, the view, the status bar, the commands. */
const start = (ctx: Ctx): void => {
  const daemon = new Daemon(readSettings())
  ctx.own({ dispose: () => void daemon.dispose() })
  const logs = ctx.own(new LogFollowers(daemon, outputSink))
  const ui = vscodeUi(ctx)
  const ports = ctx.own(
    new PortWatch({
      running: () => daemon.views.filter((view) => view.status === "running").map((view) => view.id),
      fetch: (id) => daemon.call((client) => client.ports(id)),
      open: ui.openExternal
    })
  )
  const changes = new ChangedFiles(daemon)
  const tree = ctx.own(new SandboxTree(daemon, ports, changes))
  // A diff view's sides: read through the daemon from its mirror, never from the workspace.
  ctx.own(
    vscode.workspace.registerTextDocumentContentProvider(PR_FILE_SCHEME, {
      provideTextDocumentContent: async (uri) => {
        const side = parseSideUri(uri.path, uri.query)
        return side === undefined ? "" : sideText(daemon, side)
      }
    })
  )
  const view = ctx.own(vscode.window.createTreeView(VIEW_ID, { treeDataProvider: tree, showCollapseAll: true }))
  // Ports are asked for (and so watched by the daemon) only while someone looks.
  ports.setVisible(view.visible)
  ctx.own(view.onDidChangeVisibility((event) => ports.setVisible(event.visible)))

  const status = ctx.own(vscode.window.createStatusBarItem("prbox.status", vscode.StatusBarAlignment.Left, 10))
  status.name = "PR Sandboxes"
  status.command = `${VIEW_ID}.focus`
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
  ctx.own(daemon.onDidChange(render))

  ctx.registerCommands(
    commandTable({
      ui,
      daemon,
      logs,
      baseDir: () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? homedir()
    })
  )
  ctx.own(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("prbox")) void daemon.retarget(readSettings())
    })
  )
  daemon.watch()
}

export const activate = (context: vscode.ExtensionContext): void => {
  try {
    start(new Ctx(context, vscode))
  } catch (error) {
    // Shown to the user, not only in the extension host's log.
    void vscode.window.showErrorMessage(
      `prbox: the PR Sandboxes extension failed to start: ${error instanceof Error ? error.message : String(error)}`
    )
    throw error
  }
}

import { CommandId } from "./Model.ts"
import { portPickItem } from "./PortNodes.ts"
import type { PortView, SandboxView } from "./Protocol.ts"
import { type HandlerContext, nameOf, target } from "./Target.ts"

/** Getting into a sandbox: the browser, desktop VS Code, its password, its log, a command in a terminal. */

export const openInBrowser = async ({ ui, daemon }: HandlerContext, view: SandboxView) => {
  if (view.status !== "running" || view.url === null) {
    ui.error(`Sandbox ${nameOf(view)} is ${view.status}; restart it first.`)
    return
  }
  // Opening it is activity: the idle timer starts over.
  await daemon.call((client) => client.touch(view.id))
  await ui.openExternal(view.url)
}

/**
 * Desktop VS Code's Remote - SSH URI of a sandbox: its host `<id>.prbox`,
 * which prbox's SSH entry (`prbox ssh-config --install`) reaches through the
 * daemon, and its workspace folder in the container.
 */
export const desktopUri = (view: Pick<SandboxView, "id" | "workspaceFolder">): string =>
  `vscode://vscode-remote/ssh-remote+${view.id}.prbox${view.workspaceFolder === null ? "" : encodeURI(view.workspaceFolder)}`

export const openInDesktop = async ({ ui, daemon }: HandlerContext, view: SandboxView) => {
  if (view.status !== "running") {
    ui.error(`Sandbox ${nameOf(view)} is ${view.status}; restart it first.`)
    return
  }
  await daemon.call((client) => client.touch(view.id))
  await ui.openExternal(desktopUri(view))
}

export const copyPassword = async ({ ui, daemon }: HandlerContext, view: SandboxView) => {
  const secret = await daemon.call((client) => client.password(view.id))
  await ui.copy(secret.password)
  void ui.info(`The password of sandbox ${nameOf(view)} is on the clipboard.`)
}

/** A port node's preview URL (the tree item and its context menu pass the node). */
const portUrlOf = (argument: unknown): string | undefined => {
  if (typeof argument !== "object" || argument === null || !("kind" in argument) || argument.kind !== "port") {
    return undefined
  }
  const port = "port" in argument ? (argument.port as Partial<PortView> | undefined) : undefined
  return typeof port?.url === "string" ? port.url : undefined
}

/** From the palette: a running sandbox, then one of its listening ports (asked only when there are several). */
const pickPort = async (context: HandlerContext): Promise<string | undefined> => {
  const view = await target(context, undefined, "Sandbox whose port to open in the browser")
  if (view === undefined) return undefined
  if (view.status !== "running") {
    context.ui.error(`Sandbox ${nameOf(view)} is ${view.status}; restart it first.`)
    return undefined
  }
  const list = await context.daemon.call((client) => client.ports(view.id))
  const listening = list.ports.filter((port) => port.listening)
  const [only] = listening
  if (only === undefined) {
    context.ui.error(`Nothing listens in sandbox ${nameOf(view)} yet: start the app, then try again.`)
    return undefined
  }
  if (listening.length === 1) return only.url
  return (await context.ui.pickPort(listening.map(portPickItem), "Port to open in the browser"))?.port.url
}

export const accessHandlers = (context: HandlerContext) => ({
  [CommandId.openPortInBrowser]: async (argument?: unknown) => {
    // A private preview asks for the sandbox's password once per sandbox (Copy Password has it).
    const url = portUrlOf(argument) ?? (await pickPort(context))
    if (url !== undefined) await context.ui.openExternal(url)
  },

  [CommandId.openInBrowser]: async (argument?: unknown) => {
    const view = await target(context, argument, "Sandbox to open in the browser")
    if (view !== undefined) await openInBrowser(context, view)
  },

  [CommandId.openInDesktop]: async (argument?: unknown) => {
    const view = await target(context, argument, "Sandbox to open in VS Code Desktop")
    if (view !== undefined) await openInDesktop(context, view)
  },

  [CommandId.copyPassword]: async (argument?: unknown) => {
    const view = await target(context, argument, "Sandbox whose password to copy")
    if (view !== undefined) await copyPassword(context, view)
  },

  [CommandId.showLogs]: async (argument?: unknown) => {
    const view = await target(context, argument, "Sandbox whose log to show")
    // Following goes on in the background until the sandbox is deleted.
    if (view !== undefined) void context.logs.show(view.id, `${nameOf(view)} ${view.id}`)
  },

  [CommandId.execInTerminal]: async (argument?: unknown) => {
    const view = await target(context, argument, "Sandbox to run a command in")
    if (view === undefined) return
    const command = await context.ui.input({
      prompt: `A command to run in ${nameOf(view)} (sh -c, in /workspace, as its owner, without input)`,
      placeHolder: "git status",
      value: "git status"
    })
    if (command === undefined || command.trim() === "") return
    const { cliPath, home } = context.daemon.settings
    context.ui.terminal({
      name: `prbox exec #${view.pullRequest}`,
      shellPath: cliPath,
      shellArgs: ["exec", view.id, "--", "sh", "-c", command],
      env: { PRBOX_HOME: home }
    })
  }
})

import { CommandId } from "./Model.ts"
import type { SandboxView } from "./Protocol.ts"
import { type HandlerContext, nameOf, target } from "./Target.ts"

/** Getting into a sandbox: the browser, its password, its log, a command in a terminal. */

export const openInBrowser = async ({ ui, daemon }: HandlerContext, view: SandboxView) => {
  if (view.status !== "running" || view.url === null) {
    ui.error(`Sandbox ${nameOf(view)} is ${view.status}; restart it first.`)
    return
  }
  // Opening it is activity: the idle timer starts over.
  await daemon.call((client) => client.touch(view.id))
  await ui.openExternal(view.url)
}

export const copyPassword = async ({ ui, daemon }: HandlerContext, view: SandboxView) => {
  const secret = await daemon.call((client) => client.password(view.id))
  await ui.copy(secret.password)
  void ui.info(`The password of sandbox ${nameOf(view)} is on the clipboard.`)
}

export const accessHandlers = (context: HandlerContext) => ({
  [CommandId.openInBrowser]: async (argument?: unknown) => {
    const view = await target(context, argument, "Sandbox to open in the browser")
    if (view !== undefined) await openInBrowser(context, view)
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

import { Schema } from "effect"
import type { Daemon } from "./Daemon.ts"
import type { LogFollowers } from "./Logs.ts"
import { pickItem, repoOf, sortSandboxes, titleOf } from "./Model.ts"
import { SandboxView } from "./Protocol.ts"
import type { Ui } from "./Ui.ts"

/** What every command handler works with: the editor, the daemon, the log followers. */
export interface HandlerContext {
  readonly ui: Ui
  readonly daemon: Daemon
  readonly logs: LogFollowers
  /** Relative local paths typed into Open PR Sandbox are read against this directory. */
  readonly baseDir: () => string
}

const isSandboxId = Schema.is(SandboxView.fields.id)

/** A command's argument: a sandbox node (context menu), a sandbox id (an action node), or nothing (palette). */
const idOf = (argument: unknown) => {
  if (isSandboxId(argument)) return argument
  if (typeof argument === "object" && argument !== null && "kind" in argument && argument.kind === "sandbox") {
    return "id" in argument && isSandboxId(argument.id) ? argument.id : undefined
  }
  return undefined
}

/** The sandbox a command is about, as the daemon sees it now: the argument's, or the one the user picks. */
export const target = async (
  context: HandlerContext,
  argument: unknown,
  placeHolder: string
): Promise<SandboxView | undefined> => {
  const { daemon, ui } = context
  const id = idOf(argument)
  if (id !== undefined) return daemon.call((client) => client.get(id))
  const views = sortSandboxes(await daemon.call((client) => client.list({ all: true })))
  if (views.length === 0) {
    void ui.info("There are no PR sandboxes yet: use “Open PR Sandbox…”.")
    return undefined
  }
  const now = Date.now()
  return (
    await ui.pick(
      views.map((view) => pickItem(view, now)),
      placeHolder
    )
  )?.view
}

/** `#12 title (owner/repo)`: a sandbox in messages. */
export const nameOf = (view: SandboxView) => `${titleOf(view)} (${repoOf(view)})`

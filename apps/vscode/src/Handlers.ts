import { accessHandlers } from "./Access.ts"
import { changeHandlers } from "./Changes.ts"
import { Cancelled, DaemonError } from "./Daemon.ts"
import { lifecycleHandlers } from "./Lifecycle.ts"
import { maintenanceHandlers } from "./Maintenance.ts"
import { CommandId } from "./Model.ts"
import type { HandlerContext } from "./Target.ts"

export { parseOpenInput } from "@prbox/client"
export type { HandlerContext } from "./Target.ts"
export type { DiffSide, PickItem, PortPickItem, TerminalSpec, Ui } from "./Ui.ts"

type Handler = (argument?: unknown) => Promise<void>

/** Every command's handler, by job (lifecycle, access, changes, maintenance): one entry per command id. */
export const handlers = (context: HandlerContext): Record<CommandId, Handler> => ({
  ...lifecycleHandlers(context),
  ...accessHandlers(context),
  ...changeHandlers(context),
  ...maintenanceHandlers(context)
})

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Failures where starting the daemon is the way out. */
const daemonDown = new Set(["DaemonUnreachable", "DaemonStopped"])

/**
 * The command table: every command id with its handler, wrapped so that a
 * failure is shown to the user (a cancellation is not a failure).
 */
export const commandTable = (context: HandlerContext): ReadonlyArray<readonly [CommandId, Handler]> => {
  const table = handlers(context)
  return Object.values(CommandId).map((id) => [
    id,
    async (argument?: unknown) => {
      try {
        await table[id](argument)
      } catch (error) {
        if (error instanceof Cancelled) return
        const hint = error instanceof DaemonError && daemonDown.has(error.tag) ? " (PR Sandboxes › Start Daemon)" : ""
        context.ui.error(`prbox: ${messageOf(error)}${hint}`)
      }
    }
  ])
}

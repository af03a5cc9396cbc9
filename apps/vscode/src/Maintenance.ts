import { Cleanup } from "@prbox/client"
import { Effect } from "effect"
import { CommandId, nameOf } from "./Model.ts"
import type { HandlerContext } from "./Target.ts"

/** Keeping prboxd and its sandboxes in order: refresh, gc, start the daemon. */
export const maintenanceHandlers = ({ ui, daemon }: HandlerContext) => ({
  [CommandId.refresh]: async () => {
    daemon.refresh()
  },

  [CommandId.gc]: async () => {
    // The user confirms the dry run's plan; the daemon acts only on what was shown and is still true.
    const outcome = await daemon.call((client) =>
      Cleanup.planConfirmAct(Cleanup.gc(client), {
        confirm: ({ plan }) => {
          const views = daemon.views
          const detail = [
            ...plan.stop.map((id) => `stop ${nameOf(views, id)}: idle`),
            ...plan.remove.map((id) => `delete ${nameOf(views, id)}: ended long ago`)
          ].join("\n")
          return Effect.promise(() =>
            ui.confirm(`GC: stop ${plan.stop.length} and delete ${plan.remove.length} sandbox(es)?`, detail, "Run GC")
          )
        }
      })
    )
    switch (outcome._tag) {
      case "Nothing":
        void ui.info("GC: nothing to collect (no idle sandbox, none stopped long ago).")
        return
      case "DryRun":
      case "Declined":
        return
      case "Done": {
        daemon.refresh()
        const { report, failures } = outcome
        const done = `GC stopped ${report.stopped.length} and deleted ${report.removed.length} sandbox(es).`
        if (failures.length === 0) void ui.info(done)
        else ui.error(`${done} Failed: ${failures.map((f) => `${f.sandboxId}: ${f.detail}`).join("; ")}`)
      }
    }
  },

  [CommandId.startDaemon]: async () => {
    const { info, started } = await ui.progress("Starting prboxd", () => daemon.start())
    daemon.refresh()
    void ui.info(`prboxd ${info.version} ${started ? "started" : "is already running"} (pid ${info.pid})`)
  }
})

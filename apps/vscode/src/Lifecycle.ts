import { followUntilSettled, parseOpenInput, pushLines } from "@prbox/client"
import { terminalSafe } from "@prbox/domain"
import { copyPassword, openInBrowser } from "./Access.ts"
import { Cancelled } from "./Daemon.ts"
import { CommandId, progressMessage } from "./Model.ts"
import type { SandboxView } from "./Protocol.ts"
import { type HandlerContext, nameOf, target } from "./Target.ts"

/** A sandbox's life from the editor: open, restart, rebuild (followed until settled), update, push, stop, delete. */
export const lifecycleHandlers = (context: HandlerContext) => {
  const { ui, daemon } = context

  /** What the user sees once a create or restart settles. */
  const announce = async (view: SandboxView) => {
    if (view.status === "running") {
      const choice = await ui.info(
        `Sandbox ${nameOf(view)} is running at ${view.url ?? "(no URL)"}.`,
        "Open in Browser",
        "Copy Password"
      )
      if (choice === "Open in Browser") await openInBrowser(context, view)
      if (choice === "Copy Password") await copyPassword(context, view)
      return
    }
    ui.error(
      view.status === "error"
        ? `Sandbox ${nameOf(view)} failed: ${view.error ?? "unknown error"} (Show Logs has every step).`
        : `Sandbox ${nameOf(view)} is ${view.status}: it did not reach running.`
    )
  }

  /**
   * Follows a create or restart in the notification and returns the settled
   * view; Cancel stops the sandbox instead (and returns nothing).
   */
  const settle = async (
    view: SandboxView,
    since: number,
    report: (message: string) => void,
    signal: AbortSignal,
    afterStarting = false
  ): Promise<SandboxView | undefined> => {
    try {
      if (signal.aborted) throw new Cancelled()
      return await daemon.call(
        (client) =>
          followUntilSettled(client, view, {
            since,
            afterStarting,
            onEvent: (event) => report(progressMessage(event))
          }),
        signal
      )
    } catch (error) {
      if (!(error instanceof Cancelled)) throw error
      report("cancelled: stopping…")
      const stopped = await daemon.call((client) => client.stop(view.id))
      void ui.info(`Cancelled: sandbox ${nameOf(stopped)} is ${stopped.status}.`)
      return undefined
    } finally {
      daemon.refresh()
    }
  }

  /** Hands the sandbox to a restart worker (restart, rebuild) and follows it until it settles. */
  const follow = async (
    view: SandboxView,
    verb: string,
    call: (id: SandboxView["id"]) => Promise<SandboxView>,
    afterStarting = false
  ) => {
    const settled = await ui.progress(`${verb} ${nameOf(view)}`, async (report, signal) => {
      const since = Date.now()
      const started = await call(view.id)
      daemon.refresh()
      return settle(started, since, report, signal, afterStarting)
    })
    if (settled !== undefined) await announce(settled)
  }

  return {
    [CommandId.open]: async () => {
      const text = await ui.input({
        prompt: "A pull request URL, owner/repo#N, or a git URL or path followed by --pr N (and --ref REF)",
        placeHolder: "owner/repo#123"
      })
      if (text === undefined || text.trim() === "") return
      const parsed = parseOpenInput(text, context.baseDir())
      if (parsed._tag === "invalid") return ui.error(`Open PR Sandbox: ${parsed.message}`)
      const settled = await ui.progress(`Opening ${text.trim()}`, async (report, signal) => {
        const since = Date.now()
        report("asking prboxd…")
        const opened = await daemon.call((client) => client.open(parsed.request))
        daemon.refresh()
        return settle(opened, since, report, signal)
      })
      // After the notification has closed: the message may wait long for the user.
      if (settled !== undefined) await announce(settled)
    },

    [CommandId.stop]: async (argument?: unknown) => {
      const view = await target(context, argument, "Sandbox to stop")
      if (view === undefined) return
      const stopped = await daemon.call((client) => client.stop(view.id))
      daemon.refresh()
      void ui.info(`Sandbox ${nameOf(stopped)} is ${stopped.status}.`)
    },

    [CommandId.restart]: async (argument?: unknown) => {
      const view = await target(context, argument, "Sandbox to restart")
      if (view === undefined) return
      await follow(view, "Restarting", (id) => daemon.call((client) => client.restart(id)))
    },

    [CommandId.rebuild]: async (argument?: unknown) => {
      const view = await target(context, argument, "Sandbox to rebuild")
      if (view === undefined) return
      // Its own stop comes first: only what follows `starting` settles it.
      await follow(view, "Rebuilding", (id) => daemon.call((client) => client.rebuild(id)), true)
    },

    [CommandId.update]: async (argument?: unknown) => {
      const view = await target(context, argument, "Sandbox to update")
      if (view === undefined) return
      // A refusal (uncommitted changes, a force-push) is shown by the command table, files and all.
      const report = await ui.progress(`Updating ${nameOf(view)}`, async (report) => {
        report("fetching the PR's head…")
        return daemon.call((client) => client.update(view.id, { force: false }))
      })
      daemon.refresh()
      const moved =
        report.outcome === "up-to-date"
          ? `Sandbox ${nameOf(view)} is up to date at ${report.to.slice(0, 7)}.`
          : `Sandbox ${nameOf(view)}: fast-forwarded ${report.from.slice(0, 7)}..${report.to.slice(0, 7)}.`
      const failed = report.updateContent.error
      if (failed === null) void ui.info(moved)
      else ui.error(`${moved} updateContentCommand failed: ${failed} (Show Logs has its output).`)
    },

    [CommandId.push]: async (argument?: unknown) => {
      const view = await target(context, argument, "Sandbox to push")
      if (view === undefined) return
      const preview = (to?: string) =>
        ui.progress(`Checking ${nameOf(view)}'s commits`, async (report) => {
          report("bundling the sandbox's commits…")
          return daemon.call((client) => client.push(view.id, { confirm: false, ...(to === undefined ? {} : { to }) }))
        })
      // A plain git remote has no hosting service to name the PR's branch: the user does.
      let to: string | undefined
      if (view.provider === "git") {
        to = (
          await ui.input({ prompt: "The branch of the PR's remote to push to", placeHolder: "feature-branch" })
        )?.trim()
        if (to === undefined || to === "") return
      }
      // A refusal (no new commits, uncommitted changes, the PR moved) is shown by the command table.
      const shown = await preview(to)
      const sure = await ui.confirm(
        `Push ${shown.commits.length} commit(s) of ${nameOf(view)} to ${shown.branch}?`,
        terminalSafe(pushLines(shown).join("\n")),
        "Push"
      )
      if (!sure) return
      const pushed = await daemon.call((client) =>
        client.push(view.id, { confirm: true, expectTip: shown.tip, ...(to === undefined ? {} : { to }) })
      )
      daemon.refresh()
      void ui.info(`Pushed ${pushed.commits.length} commit(s) to ${pushed.branch} of ${pushed.remote}.`)
    },

    [CommandId.delete]: async (argument?: unknown) => {
      const view = await target(context, argument, "Sandbox to delete")
      if (view === undefined) return
      const sure = await ui.confirm(
        `Delete sandbox ${nameOf(view)}?`,
        "Its container, workspace and state are removed; uncommitted work in it is lost.",
        "Delete"
      )
      if (!sure) return
      // The user confirmed, so a live sandbox is stopped first (`prbox rm --force`).
      await daemon.call((client) => client.delete(view.id, { force: true }))
      daemon.refresh()
      void ui.info(`Deleted sandbox ${nameOf(view)}.`)
    }
  }
}

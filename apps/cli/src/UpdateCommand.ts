import type { UpdateReport } from "@prbox/protocol"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { printJson } from "./Exit.ts"
import { idArgument, json, needsDaemon, out, resolveId } from "./Params.ts"

const short = (commit: string) => commit.slice(0, 7)

/** What `prbox update` did, in words. */
export const updateLines = (report: UpdateReport): string => {
  const id = report.sandbox.id
  const moved =
    report.outcome === "up-to-date"
      ? `sandbox ${id} is up to date at ${short(report.to)}`
      : report.outcome === "fast-forwarded"
        ? `sandbox ${id}: fast-forwarded ${short(report.from)}..${short(report.to)}`
        : `sandbox ${id}: reset to ${short(report.to)}; the previous head ${short(report.from)} is kept on ${report.keptBranch ?? "(no branch)"}`
  const content = report.updateContent.error
  return content === null
    ? moved
    : `${moved}\nwarning: updateContentCommand failed: ${content}; the workspace was updated (\`prbox logs ${id}\`)`
}

export const updateCommand = Command.make(
  "update",
  {
    id: idArgument,
    force: Flag.Boolean("force").pipe(
      Flag.withDescription(
        "when the PR was force-pushed (or the workspace has local commits), keep the old head on a branch prbox/before-update-<n> and reset to the new head"
      ),
      Flag.withDefault(false)
    ),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      const report = yield* client.update(view.id, { force: config.force })
      if (config.json) return printJson(report)
      yield* out(updateLines(report))
    })
  )
).pipe(
  Command.withDescription(
    [
      "Update a running sandbox to its PR's new head: fetch it, fast-forward the workspace, run updateContentCommand.",
      "Refused (exit 4, nothing touched) when the workspace has uncommitted changes (they are listed; --json: error.changedFiles),",
      "or when the PR was force-pushed or the workspace has its own commits, unless --force."
    ].join(" ")
  )
)

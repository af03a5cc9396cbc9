import { PREBUILDS_HEADER, prebuildRows, prebuildSummary } from "@prbox/client"
import { Clock, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { printJson, usageError } from "./Exit.ts"
import { table, terminalColumns } from "./Format.ts"
import { json, needsDaemon, out } from "./Params.ts"

const status = Flag.Boolean("status").pipe(
  Flag.withDescription(
    "list the prebuilds: repository, base commit, state (a failed one's reason), size, made, last used, key"
  ),
  Flag.withDefault(false)
)

/** `prbox prebuild --status`: the daemon's prebuilds, as a table or (--json) as the daemon answers. */
export const prebuildCommand = Command.make(
  "prebuild",
  { status, json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      if (!config.status) {
        return yield* usageError(
          "say --status: prebuilds are made in the background after an open of a repository whose environment has onCreateCommand or updateContentCommand"
        )
      }
      const answer = yield* client.prebuilds
      if (config.json) return printJson(answer)
      yield* out(`prebuilds: ${prebuildSummary(answer)}`)
      if (answer.prebuilds.length === 0) return
      const rows = prebuildRows(answer, yield* Clock.currentTimeMillis)
      yield* out(table(PREBUILDS_HEADER, rows, terminalColumns(process.stdout)))
    })
  )
).pipe(
  Command.withDescription(
    [
      "Prebuilds: a repository's base branch with its environment made and onCreateCommand/updateContentCommand",
      "already run, so that a PR with the same environment starts from it. --status lists them and the disk they",
      'use of "prebuilds": {"maxGiB"} (config.json); --json prints {enabled, capBytes, usedBytes, prebuilds}.'
    ].join("\n  ")
  )
)

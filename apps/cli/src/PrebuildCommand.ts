import { openRequest, PREBUILDS_HEADER, type PrboxClientShape, prebuildRows, prebuildSummary } from "@prbox/client"
import type { OpenRequest, PrebuildEvent } from "@prbox/protocol"
import { Clock, Effect, Option, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CliFailure, ExitCode, printJson, usageError } from "./Exit.ts"
import { table, terminalColumns } from "./Format.ts"
import { json, needsDaemon, optionalNumber, out, prFlag } from "./Params.ts"

const status = Flag.Boolean("status").pipe(
  Flag.withDescription(
    "list the prebuilds: repository, base commit, state (a failed one's reason), size, made, last used, key"
  ),
  Flag.withDefault(false)
)

const input = Argument.String("pull-request-or-repository").pipe(
  Argument.withDescription(
    "a pull request (a URL, owner/repo#N, or a git URL or path with --pr N, as prbox open), or a repository (its URL, a git URL or a path: its default branch)"
  ),
  Argument.optional
)

/**
 * `prbox prebuild <input>`: the daemon's progress lines on stderr as they
 * come, then how it ended on stdout (or --json); a failure is its safe reason and exit 1.
 */
const makeNow = (client: PrboxClientShape, request: OpenRequest, asJson: boolean) =>
  Effect.gen(function* () {
    let last = undefined as Extract<PrebuildEvent, { readonly _tag: "Finished" | "Failed" }> | undefined
    yield* client.makePrebuild(request).pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          if (event._tag === "Progress") {
            if (!asJson) process.stderr.write(`${event.line}\n`)
          } else last = event
        })
      )
    )
    if (last === undefined || last._tag === "Failed") {
      const message = last === undefined ? "the daemon ended the prebuild without an answer" : last.reason
      return yield* new CliFailure({ tag: "PrebuildFailed", message, code: ExitCode.other })
    }
    if (asJson) return printJson({ outcome: last.outcome, prebuild: last.prebuild })
    const { prebuild, outcome } = last
    const at = `${prebuild.host}/${prebuild.repository} ${prebuild.baseBranch}@${prebuild.baseCommit.slice(0, 7)}`
    const follow = outcome === "being made" ? "; see prbox prebuild --status" : ""
    yield* out(`prebuild ${prebuild.id} of ${at}: ${outcome}${follow}`)
  })

/** `prbox prebuild <input>` makes one now; `--status` lists them, as a table or (--json) as the daemon answers. */
export const prebuildCommand = Command.make(
  "prebuild",
  {
    input,
    pr: prFlag,
    ref: Flag.String("ref").pipe(
      Flag.withDescription("with --pr: fetch this ref instead of the provider's, as prbox open"),
      Flag.optional
    ),
    status,
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      if (!config.status) {
        if (Option.isNone(config.input)) {
          return yield* usageError(
            "say which repository (its URL, a git URL or a path; or a pull request, as prbox open takes one), or --status"
          )
        }
        const request = openRequest(config.input.value, process.cwd(), {
          pr: optionalNumber(config.pr),
          ref: Option.getOrUndefined(config.ref)
        })
        return yield* makeNow(client, request, config.json)
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
      "already run, so that a PR with the same environment starts from it (with the warm pool on, an environment",
      "without such steps too: pool containers start from it).",
      "`prbox prebuild <repository>` makes its default branch's now; `prbox prebuild <pull-request>` its base",
      'branch\'s. It answers "made", "refreshed" (the base moved), "up to date" (a ready one is at its commit) or',
      '"being made" (an open\'s build runs; a second request waits for the first); progress on stderr; --json',
      "prints {outcome, prebuild}. --status lists them and the disk they use of",
      '"prebuilds": {"maxGiB"} (config.json); --json prints {enabled, capBytes, usedBytes, prebuilds}.'
    ].join("\n  ")
  )
)

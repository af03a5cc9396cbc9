import { type PushRefusal, pushLines, pushResult, refusedResult } from "@prbox/client"
import type { PushRefused, PushReport } from "@prbox/protocol"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { ExitCode, printJson } from "./Exit.ts"
import { confirm, idArgument, json, needsDaemon, note, out, resolveId, yesFlag } from "./Params.ts"

const toFlag = Flag.String("to").pipe(
  Flag.withDescription("the branch of the PR's remote to push to (a plain git remote has no service to name it)"),
  Flag.optional
)

const refusalOf = (error: PushRefused): PushRefusal => ({
  kind: error.kind,
  reason: error.message,
  ...(error.changedFiles === undefined ? {} : { changedFiles: error.changedFiles })
})

export const pushCommand = Command.make(
  "push",
  { id: idArgument, to: toFlag, yes: yesFlag, json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      const to = Option.getOrUndefined(config.to)
      const where = to === undefined ? {} : { to }
      let shown: PushReport | undefined
      const attempt = Effect.gen(function* () {
        shown = yield* client.push(view.id, { confirm: false, ...where })
        const preview = shown
        if (!config.json) yield* Effect.forEach(pushLines(preview), out)
        if (config.json && !config.yes) {
          // One JSON answer: the preview, refused for want of confirmation.
          const hint = { kind: "not-confirmed", reason: "nothing pushed: pass --yes to push with --json" }
          printJson(refusedResult(view.id, hint, preview))
          process.exitCode = ExitCode.usage
          return
        }
        if (!(yield* confirm("push them?", config.yes))) return yield* note("nothing pushed")
        // The push is refused if the sandbox's commits changed since they were shown.
        const pushed = yield* client.push(view.id, { confirm: true, expectTip: preview.tip, ...where })
        if (config.json) return printJson(pushResult(pushed))
        yield* out(`pushed ${pushed.commits.length} commit(s) to ${pushed.branch} of ${pushed.remote}`)
      })
      // --json: a refusal is the same result, with its reason (and the exit code of a conflict).
      return yield* attempt.pipe(
        Effect.catchIf(
          (error): error is PushRefused => config.json && error._tag === "PushRefused",
          (error) =>
            Effect.sync(() => {
              printJson(refusedResult(view.id, refusalOf(error), shown))
              process.exitCode = ExitCode.conflict
            })
        )
      )
    })
  )
).pipe(
  Command.withDescription(
    [
      "Push the sandbox's new commits to its PR's branch, with your own git credentials (none enter the sandbox).",
      "The commits leave the sandbox as a git bundle, are checked on this machine and shown (author, subject, files), then pushed after confirmation (--yes for scripts),",
      "leased on the PR's head the sandbox started from. The branch is the one the hosting service reports (a fork's when it lets maintainers push); a plain git remote needs --to <branch>.",
      "Refused (exit 4, nothing changed): no new commits, not a fast-forward, uncommitted changes (listed), the PR moved (run prbox update), the lease failed."
    ].join(" ")
  )
)

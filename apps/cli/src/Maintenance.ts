import { Cleanup, type PrboxClientShape } from "@prbox/client"
import type { MaintenanceFailure } from "@prbox/protocol"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { CliFailure, ExitCode, printJson } from "./Exit.ts"
import { confirm, dryRunFlag, json, needsDaemon, note, out, yesFlag } from "./Params.ts"

/** Bringing state back in line (reconcile) and cleaning up (gc, prune): plan, confirm, act. */

const failIfFailures = (failures: ReadonlyArray<MaintenanceFailure>) =>
  Effect.gen(function* () {
    if (failures.length === 0) return
    for (const failure of failures) yield* note(`failed: ${failure.sandboxId}: ${failure.detail}`)
    return yield* new CliFailure({
      tag: "CleanupIncomplete",
      message: `${failures.length} action(s) failed`,
      code: ExitCode.other
    })
  })

const reconcile = Command.make(
  "reconcile",
  { json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const report = yield* client.reconcile
      if (config.json) printJson(report)
      else {
        for (const pass of report.passes) {
          for (const change of pass.changes) {
            yield* out(`${pass.pass}: ${change.sandboxId ?? change.containerId ?? "?"}: ${change.action}`)
          }
        }
        const changes = report.passes.reduce((n, pass) => n + pass.changes.length, 0)
        yield* out(changes === 0 ? "nothing to reconcile" : `${changes} change(s)`)
      }
      yield* failIfFailures(report.passes.flatMap((pass) => pass.failures))
    })
  )
).pipe(Command.withDescription("Bring rows and containers back in line with each other (also runs at daemon start)."))

/**
 * A cleanup command: prints the plan (text mode), asks (unless --yes), acts,
 * prints the result, and fails when any action failed. --json prints the plan
 * when nothing is done, else the report.
 */
const cleanupCommand = <Plan, Report extends { readonly plan: Plan }>(spec: {
  readonly name: string
  readonly description: string
  readonly cleanup: (client: PrboxClientShape) => Cleanup.Cleanup<Plan, Report>
  readonly planLines: (plan: Plan) => ReadonlyArray<string>
  readonly nothing: string
  readonly question: string
  /** What was actually done (after a partial failure too), printed next to what failed. */
  readonly done: (report: Report) => ReadonlyArray<string>
}) =>
  Command.make(
    spec.name,
    { dryRun: dryRunFlag, yes: yesFlag, json },
    needsDaemon((client, config) =>
      Effect.gen(function* () {
        const outcome = yield* Cleanup.planConfirmAct(spec.cleanup(client), {
          dryRun: config.dryRun,
          show: (planned) =>
            config.json
              ? Effect.void
              : Effect.forEach(spec.planLines(planned.plan), out).pipe(
                  Effect.andThen(spec.planLines(planned.plan).length === 0 ? out(spec.nothing) : Effect.void)
                ),
          confirm: () => confirm(spec.question, config.yes)
        })
        switch (outcome._tag) {
          case "Nothing":
          case "DryRun":
            if (config.json) printJson(outcome.planned)
            return
          case "Declined":
            return yield* note("nothing done")
          case "Done":
            if (config.json) printJson(outcome.report)
            else yield* Effect.forEach(spec.done(outcome.report), out)
            return yield* failIfFailures(outcome.failures)
        }
      })
    )
  ).pipe(Command.withDescription(spec.description))

const gc = cleanupCommand({
  name: "gc",
  description:
    "Stop idle sandboxes and delete long-stopped ones. Shows the plan; acts (after confirmation, or --yes) only on what is still true.",
  cleanup: Cleanup.gc,
  planLines: (plan) => [
    ...plan.stop.map((id) => `stop    ${id} (idle)`),
    ...plan.remove.map((id) => `remove  ${id} (ended long ago)`)
  ],
  nothing: "nothing to collect",
  question: "stop and remove these sandboxes?",
  done: (report) => [
    ...report.stopped.map((id) => `stopped  ${id}`),
    ...report.removed.map((id) => `removed  ${id}`),
    `stopped ${report.stopped.length}, removed ${report.removed.length}`
  ]
})

const prune = cleanupCommand({
  name: "prune",
  description: "Remove containers, volumes and directories of this PRBOX_HOME that no sandbox owns.",
  cleanup: Cleanup.prune,
  planLines: (plan) => [
    ...plan.containers.map((id) => `container  ${id}`),
    ...plan.volumes.map((name) => `volume     ${name}`),
    ...plan.directories.map((path) => `directory  ${path}`)
  ],
  nothing: "nothing to prune",
  question: "remove these containers, volumes and directories?",
  done: ({ removed }) => [
    ...removed.containers.map((id) => `removed container  ${id}`),
    ...removed.volumes.map((name) => `removed volume  ${name}`),
    ...removed.directories.map((path) => `removed directory  ${path}`),
    `removed ${removed.containers.length} container(s), ${removed.volumes.length} volume(s), ${removed.directories.length} directorie(s)`
  ]
})

export const maintenanceCommands = [reconcile, gc, prune] as const

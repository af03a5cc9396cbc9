import type { Sandbox } from "@prbox/domain"
import { Cause, Context, Effect, Layer, Option } from "effect"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { StopWon, safeReason } from "../Errors.ts"
import { Lifecycle } from "../Lifecycle.ts"

const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const lifecycle = yield* Lifecycle
  const { advance, getRow, progress } = lifecycle

  /**
   * A worker's failure leaves no code-server running on a row in `error`:
   * the container the row records is stopped (its output kept for `docker
   * logs`) before the row says so, whichever step failed (the checkout, the
   * health wait, a status write). The row, not the worker, says whether one
   * exists: a failure may cut in before the worker knew. A stop Docker does
   * not confirm is left to reconcile, which stops an ended row's container.
   */
  const stopRecorded = (row: Sandbox) =>
    Effect.flatMap(getRow(row.id), ({ containerId }) =>
      containerId === null
        ? Effect.void
        : lifecycle
            .withContainer(row.id, runtime.stop(containerId))
            .pipe(Effect.catch((error) => progress(row, `could not stop its container: ${error.message}`)))
    ).pipe(Effect.ignore)

  /**
   * Ends a worker: a stop ends it quietly, an interruption goes through, and
   * any other failure or defect stops its container and puts the row in
   * `error` with a safe reason.
   */
  const supervise = <E>(row: Sandbox, work: Effect.Effect<void, E>): Effect.Effect<void> =>
    Effect.catchCause(work, (cause) => {
      if (Cause.hasInterrupts(cause)) return Effect.interrupt
      const error = Cause.findErrorOption(cause)
      if (Option.isSome(error) && error.value instanceof StopWon) return Effect.void
      // A defect is a bug: its cause goes to the log, the row gets a safe reason.
      const record = Option.isSome(error)
        ? advance(row.id, "error", { error: safeReason(error.value) })
        : Effect.logError("sandbox worker died", cause).pipe(
            Effect.andThen(advance(row.id, "error", { error: safeReason(Cause.squash(cause)) }))
          )
      return Effect.andThen(stopRecorded(row), Effect.ignore(record))
    })

  return supervise
})

/** How a sandbox's worker ends (Workers.ts): see `supervise` above. */
export class Supervise extends Context.Service<Supervise, Effect.Success<typeof make>>()("prbox/engine/Supervise") {
  static readonly layer = Layer.effect(Supervise, make)
}

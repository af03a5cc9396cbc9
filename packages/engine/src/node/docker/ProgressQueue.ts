import { Effect, Fiber, Queue } from "effect"

/**
 * Docker reports progress through a plain callback; a queue hands the lines
 * to the caller's effect in order, repeated lines once. The run's outcome is
 * returned as a Result once every line was handed over.
 */
export const withProgress = <A, E>(
  onProgress: (line: string) => Effect.Effect<void>,
  run: (report: (line: string) => void) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const lines = yield* Queue.unbounded<string>()
    const forward = yield* Queue.take(lines).pipe(Effect.flatMap(onProgress), Effect.forever, Effect.forkChild)
    let last = ""
    const result = yield* Effect.result(
      run((line) => {
        if (line !== last) Queue.offerUnsafe(lines, line)
        last = line
      })
    )
    yield* Fiber.interrupt(forward)
    for (const line of yield* Queue.clear(lines)) yield* onProgress(line)
    return result
  })

import { Effect, Path } from "effect"

/**
 * POSIX path arithmetic without Node: effect's own implementation. Paths in
 * a container are POSIX whatever runs it, and so are the hosts prbox runs on
 * (Linux, macOS), so the engine's rules join and normalize both with it.
 */
export const posixPath: Path.Path = Effect.runSync(
  Effect.gen(function* () {
    return yield* Path.Path
  }).pipe(Effect.provide(Path.layer))
)

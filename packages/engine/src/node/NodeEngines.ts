import { Docker } from "@prbox/docker"
import { type ChosenEngine, engineAddress, rowEngine } from "@prbox/domain"
import { Context, Effect, Exit, Layer, Scope, Semaphore } from "effect"
import { ContainerRuntime, type ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { Engines } from "../Engines.ts"
import { RuntimeError } from "../Errors.ts"
import { dockerFor, imageSourceFor } from "./engines/EngineClient.ts"
import * as NodeContainerRuntime from "./NodeContainerRuntime.ts"

/** Engines other than the configured one kept open at once; the least recently used is closed past it. */
const KEPT_ENGINES = 4
const PING_TIMEOUT = "5 seconds"

interface Kept {
  readonly runtime: ContainerRuntimeShape
  readonly ping: Effect.Effect<void, RuntimeError>
  readonly scope: Scope.Closeable
}

/**
 * Engines over Docker: the configured engine's runtime is ContainerRuntime;
 * another engine's is built from its address (dockerFor) on first use,
 * pinged before each use, and closed when evicted or with the layer.
 */
export const layer = (chosen: ChosenEngine) =>
  Layer.effect(
    Engines,
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const parent = yield* Effect.scope
      const current = rowEngine(chosen.address)
      const kept = new Map<string, Kept>()
      const lock = yield* Semaphore.make(1)

      const unreachable = (address: string) => (error: { readonly message: string }) =>
        new RuntimeError({ operation: `engine ${address}`, detail: `cannot be reached (${error.message})` })

      const open = (address: string) =>
        Effect.gen(function* () {
          const scope = yield* Scope.fork(parent)
          const built = yield* Layer.buildWithScope(
            Layer.provideMerge(
              NodeContainerRuntime.layer.pipe(Layer.provide(imageSourceFor(address))),
              dockerFor(address)
            ),
            scope
          ).pipe(
            Effect.tapError(() => Scope.close(scope, Exit.void)),
            Effect.mapError(unreachable(address))
          )
          const docker = Context.get(built, Docker)
          const ping = docker.ping().pipe(
            Effect.timeoutOrElse({
              duration: PING_TIMEOUT,
              orElse: () => Effect.fail({ message: "no answer" })
            }),
            Effect.mapError(unreachable(address))
          )
          return { runtime: Context.get(built, ContainerRuntime), ping, scope } satisfies Kept
        })

      const keep = (address: string) =>
        lock.withPermit(
          Effect.gen(function* () {
            const found = kept.get(address)
            if (found !== undefined) {
              // Most recently used last: eviction takes the first.
              kept.delete(address)
              kept.set(address, found)
              return found
            }
            const made = yield* open(address)
            kept.set(address, made)
            if (kept.size > KEPT_ENGINES) {
              const [oldest, evicted] = kept.entries().next().value as [string, Kept]
              kept.delete(oldest)
              yield* Scope.close(evicted.scope, Exit.void)
            }
            return made
          })
        )

      return Engines.of({
        chosen,
        current,
        runtimeFor: Effect.fn("Engines.runtimeFor")(function* (engine: string | null) {
          if (engine === current) return runtime
          const other = yield* keep(engineAddress(engine))
          yield* other.ping
          return other.runtime
        })
      })
    })
  )

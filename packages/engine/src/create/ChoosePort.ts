import type { SandboxId } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Context, Effect, Layer } from "effect"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { mapStoreErrors } from "../Errors.ts"

/**
 * Where a sandbox's port on this machine's 127.0.0.1 is chosen. The port is
 * the sandbox's URL for life: a container made again asks for the one its
 * row records (`requested`); a sandbox without one gets a free port (the
 * runtime's `freePort`) that no other sandbox keeps, their containers may be
 * stopped and their ports free for now. Only when something else holds the
 * requested port at start does the sandbox move (CreateContainer.ts, `movedFrom`).
 */
const make = Effect.gen(function* () {
  const repo = yield* SandboxRepo
  const runtime = yield* ContainerRuntime

  /** Ports other sandboxes keep. */
  const keptPorts = (id: SandboxId) =>
    repo.findAll().pipe(
      mapStoreErrors("sandbox.ports"),
      Effect.map(
        (rows) => new Set(rows.flatMap((other) => (other.id === id || other.hostPort === null ? [] : [other.hostPort])))
      )
    )

  return (id: SandboxId, requested: number | null) =>
    requested === null ? Effect.flatMap(keptPorts(id), runtime.freePort) : Effect.succeed(requested)
})

export class ChoosePort extends Context.Service<ChoosePort, Effect.Success<typeof make>>()("prbox/engine/ChoosePort") {
  static readonly layer = Layer.effect(ChoosePort, make)
}

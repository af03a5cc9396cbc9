import {
  type DeclaredServicePort,
  type EnvironmentPlan,
  portKey,
  type ReachableService,
  type SandboxId,
  serviceRefusal
} from "@prbox/domain"
import { Effect } from "effect"
import type { ContainerRuntime, RelayAccess } from "../ContainerRuntime.ts"
import { UnknownService } from "../Errors.ts"

/*
 * A Compose sandbox's other services as previews see them: only what the host
 * recorded of the project when it made the sandbox (the plan's `compose`),
 * never what the container says.
 */

/** How many service ports are dialled at once to see which listen. */
const PROBES_AT_ONCE = 8

/** The services the app reaches by name (none for a sandbox without Compose, or made before service previews). */
export const reachableOf = (plan: EnvironmentPlan | null): ReadonlyArray<ReachableService> =>
  plan?.compose?.reachable ?? []

/** The names the relay may dial, given to it when it starts. */
export const relayServices = (plan: EnvironmentPlan | null): ReadonlyArray<string> =>
  reachableOf(plan).map((entry) => entry.service)

/** `service` when the sandbox's app reaches it by name, else UnknownService saying why; nothing is dialled. */
export const checkedService = (id: SandboxId, plan: EnvironmentPlan | null, service: string) => {
  const reason = serviceRefusal(service, plan?.compose?.service, plan?.compose?.reachable)
  return reason === undefined ? Effect.succeed(service) : Effect.fail(new UnknownService({ id, service, reason }))
}

/**
 * The `portKey`s of `declared` that take a connection now: each dialled
 * through the relay and closed at once. A port that refuses, or a service
 * the relay cannot reach (stopped, not resolving), is not listening; a
 * sandbox whose relay is unavailable fails the listing, as discovery does.
 */
export const listeningServicePorts = (
  runtime: ContainerRuntime["Service"],
  containerId: string,
  relay: RelayAccess,
  declared: ReadonlyArray<DeclaredServicePort>
) =>
  Effect.forEach(
    declared,
    (entry) =>
      runtime.connect(containerId, entry.port, relay, entry.service).pipe(
        Effect.map((stream) => {
          stream.socket.destroy()
          return [portKey(entry.port, entry.service)]
        }),
        Effect.catchTags({ PortClosed: () => Effect.succeed([]), RuntimeError: () => Effect.succeed([]) })
      ),
    { concurrency: PROBES_AT_ONCE }
  ).pipe(Effect.map((keys) => new Set(keys.flat())))

import type { Docker } from "@prbox/docker"
import { Effect } from "effect"
import { LABELS } from "../../ContainerSpec.ts"
import { RuntimeError } from "../../Errors.ts"

const STOP_TIMEOUT_SECONDS = 10

/**
 * A Compose sandbox's other services (its database, its cache): the
 * containers labelled with the sandbox's id and a service name
 * (LABELS.service), and the networks labelled with the sandbox's id. Found
 * by label, never through Compose, so a start, stop or removal of the
 * sandbox's container covers them after a crash and without the project
 * file. A single-container sandbox has none: each step is then one list.
 */
export const serviceContainersFor = (docker: Docker["Service"]) => {
  const failed = (operation: string) => (error: { readonly message: string }) =>
    new RuntimeError({ operation, detail: error.message })

  /** The sandbox a container is of, from its labels; undefined when it is gone or none. */
  const sandboxOf = (containerId: string) =>
    docker.inspect(containerId).pipe(
      Effect.map((info) => info.labels[LABELS.sandbox]),
      Effect.catchTag("ContainerNotFound", () => Effect.succeed(undefined)),
      Effect.mapError(failed("container.inspect"))
    )

  const servicesOf = (sandbox: string) =>
    docker.listByLabel({ [LABELS.sandbox]: sandbox }, { all: true }).pipe(
      Effect.map((containers) => containers.filter((container) => container.labels[LABELS.service] !== undefined)),
      Effect.mapError(failed("container.list"))
    )

  /** The other services started before the sandbox's container (what it depends on is up first). */
  const start = (containerId: string) =>
    Effect.gen(function* () {
      const sandbox = yield* sandboxOf(containerId)
      if (sandbox === undefined) return
      for (const service of yield* servicesOf(sandbox)) {
        if (service.state === "running") continue
        yield* docker.start(service.id).pipe(
          Effect.catchTag("ContainerAlreadyStarted", () => Effect.void),
          Effect.mapError(failed("container.start"))
        )
      }
    })

  /**
   * Stopped with it, all at once (each may take its whole grace period): each
   * confirmed stopped or gone, else the stop fails.
   */
  const stop = (sandbox: string) =>
    Effect.flatMap(servicesOf(sandbox), (services) =>
      Effect.forEach(
        services,
        (service) =>
          docker.stop(service.id, { timeoutSeconds: STOP_TIMEOUT_SECONDS }).pipe(
            Effect.catchTag("ContainerAlreadyStopped", () => Effect.void),
            Effect.catchTag("ContainerNotFound", () => Effect.void),
            Effect.mapError(failed("container.stop"))
          ),
        { concurrency: "unbounded", discard: true }
      )
    )

  /** Removed with it, then the sandbox's networks (a network goes once no container is on it). */
  const remove = (sandbox: string) =>
    Effect.gen(function* () {
      for (const service of yield* servicesOf(sandbox)) {
        yield* docker.remove(service.id, { force: true, volumes: true }).pipe(
          Effect.catchTag("ContainerNotFound", () => Effect.void),
          Effect.mapError(failed("container.remove"))
        )
      }
      const networks = yield* docker
        .listNetworksByLabel({ [LABELS.sandbox]: sandbox })
        .pipe(Effect.mapError(failed("network.list")))
      for (const network of networks) {
        yield* docker.removeNetwork(network.name).pipe(Effect.mapError(failed("network.remove")))
      }
    })

  return { sandboxOf, start, stop, remove }
}

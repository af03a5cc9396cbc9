import type { ContainerInfo, ContainerSpec, DockerShape, Loopback } from "@prbox/docker"
import { Effect, Exit, Scope, Semaphore } from "effect"
import { LABELS } from "../../ContainerSpec.ts"
import { PortTaken, RuntimeError } from "../../Errors.ts"

/**
 * How the Docker runtime's containers reach this machine's 127.0.0.1.
 *
 * - A local engine's 127.0.0.1 is this machine's: the container publishes
 *   code-server on the sandbox's port itself.
 * - A remote engine's (over SSH) is not: the container publishes its ports on
 *   the remote's 127.0.0.1 only, at ports Docker picks at every start, and
 *   this machine's 127.0.0.1:<the sandbox's port> is forwarded to code-server's
 *   over the engine's SSH connection, from `started` (or `attach`, after a
 *   daemon restart) until `released` (stop, destroy). The sandbox's port is
 *   recorded on the container (LABELS.port): nothing else remembers it.
 */
export interface HostPorts {
  /** The spec Docker creates the container from. */
  readonly publish: (spec: ContainerSpec) => ContainerSpec
  /** After a start: the port on this machine's 127.0.0.1 code-server is reached at. */
  readonly started: (info: ContainerInfo) => Effect.Effect<number, RuntimeError | PortTaken>
  /** The port a running container is reached at here, as far as Docker tells (undefined: none). */
  readonly reachedAt: (info: ContainerInfo) => number | undefined
  /** Ends what `started` opened for the container (nothing when nothing is open). */
  readonly released: (containerId: string) => Effect.Effect<void>
}

const localPorts: HostPorts = {
  publish: (spec) => spec,
  started: (info) =>
    info.hostPort === undefined
      ? Effect.fail(new RuntimeError({ operation: "container.start", detail: "no published port after start" }))
      : Effect.succeed(info.hostPort),
  reachedAt: (info) => info.hostPort,
  released: () => Effect.void
}

/** The sandbox's port recorded on the container; undefined for a container made without one (tests' bare ones). */
const recordedPort = (info: ContainerInfo): number | undefined => {
  const port = Number(info.labels[LABELS.port])
  return Number.isInteger(port) && port > 0 ? port : undefined
}

interface Forward {
  readonly remotePort: number
  readonly localPort: number
  readonly scope: Scope.Closeable
}

/** Forwards that live in `parent` (the runtime's scope) at the latest. */
const forwardedPorts = (loopback: Extract<Loopback, { kind: "ssh" }>, parent: Scope.Scope): HostPorts => {
  const forwards = new Map<string, Forward>()
  // One change of the forwards at a time: a start and a reconcile's attach may meet.
  const lock = Semaphore.makeUnsafe(1)

  const close = (containerId: string) =>
    Effect.suspend(() => {
      const open = forwards.get(containerId)
      if (open === undefined) return Effect.void
      forwards.delete(containerId)
      return Scope.close(open.scope, Exit.void)
    })

  const open = (info: ContainerInfo, remotePort: number) =>
    Effect.gen(function* () {
      const scope = yield* Scope.fork(parent)
      const { localPort } = yield* loopback.forward({ localPort: recordedPort(info), remotePort }).pipe(
        Scope.provide(scope),
        Effect.tapError(() => Scope.close(scope, Exit.void)),
        Effect.mapError((error) =>
          error._tag === "PortInUse"
            ? new PortTaken({ detail: error.detail })
            : new RuntimeError({ operation: "container.forward", detail: error.message })
        )
      )
      forwards.set(info.id, { remotePort, localPort, scope })
      return localPort
    })

  return {
    publish: ({ hostPort, ...spec }) =>
      hostPort === undefined ? spec : { ...spec, labels: { ...spec.labels, [LABELS.port]: String(hostPort) } },
    started: (info) =>
      lock.withPermit(
        Effect.gen(function* () {
          const remotePort = info.hostPort
          if (remotePort === undefined) {
            return yield* new RuntimeError({ operation: "container.start", detail: "no published port after start" })
          }
          const known = forwards.get(info.id)
          // Already forwarded to where the container publishes now: a second start, or an attach.
          if (known !== undefined && known.remotePort === remotePort) return known.localPort
          // A restarted container publishes on a new remote port.
          yield* close(info.id)
          return yield* open(info, remotePort)
        })
      ),
    reachedAt: (info) => recordedPort(info) ?? forwards.get(info.id)?.localPort,
    released: (containerId) => lock.withPermit(close(containerId))
  }
}

/** The way `docker`'s engine reaches this machine's 127.0.0.1; forwards close with the calling scope. */
export const hostPortsFor = Effect.fnUntraced(function* (docker: DockerShape) {
  if (docker.loopback.kind === "local") return localPorts
  return forwardedPorts(docker.loopback, yield* Effect.scope)
})

import { readFileSync } from "node:fs"
import type { DockerShape } from "@prbox/docker"
import { listeningPorts } from "@prbox/domain"
import { Effect, Schedule, Semaphore } from "effect"
import { PREVIEW_RELAY_PORT } from "../../CodeServerSpec.ts"
import type { PortStream, RelayAccess } from "../../ContainerRuntime.ts"
import { PortClosed, PreviewUnavailable, RuntimeError } from "../../Errors.ts"
import {
  connectRequest,
  handshake,
  portsRequest,
  RELAY_SOURCE_FILE,
  type RelayAnswer,
  readToEnd
} from "./RelayClient.ts"

/** How long a relay just started has to answer. */
const RELAY_START_TIMEOUT = "5 seconds"
const RELAY_RETRY = Schedule.spaced("100 millis")

const MADE_BEFORE_PREVIEWS = "its container was made before previews: `prbox rebuild` gives it them"

const relayError = (detail: string) => new RuntimeError({ operation: "preview.relay", detail })

/**
 * NodeContainerRuntime's `connect` and `listeningPorts`: through prbox's relay in
 * the container, reached at the host port Docker published it on (on this
 * machine's 127.0.0.1, or dialled over SSH on a remote engine's), and
 * started (a detached exec) the first time it does not answer.
 */
export const dockerRelayFor = Effect.fnUntraced(function* (docker: DockerShape) {
  const source = readFileSync(RELAY_SOURCE_FILE, "utf8")
  /** The relay's host port per container, as last inspected; it changes at every start. */
  const hostPorts = new Map<string, number>()
  /** One relay start at a time per container. */
  const starts = new Map<string, Semaphore.Semaphore>()
  const startLock = (containerId: string): Semaphore.Semaphore => {
    const known = starts.get(containerId)
    if (known !== undefined) return known
    const made = Semaphore.makeUnsafe(1)
    starts.set(containerId, made)
    return made
  }

  /** The relay's answer at the engine host's `hostPort`; nothing listening there is no answer. */
  const exchange = (hostPort: number, request: string): Effect.Effect<RelayAnswer, RuntimeError> =>
    docker.loopback.kind === "local"
      ? handshake(hostPort, request)
      : docker.loopback.dial(hostPort).pipe(
          Effect.flatMap((stream) => handshake(stream, request)),
          Effect.catchTag("ConnectionRefused", () => Effect.succeed<RelayAnswer>({ _tag: "NoAnswer" })),
          Effect.mapError((error) => relayError(error.message))
        )

  const inspectHostPort = Effect.fn("NodeContainerRuntime.relayHostPort")(function* (containerId: string) {
    const info = yield* docker
      .inspect(containerId)
      .pipe(Effect.mapError((error) => new RuntimeError({ operation: "preview.inspect", detail: error.message })))
    if (!info.state.running) return yield* relayError("the container is not running")
    const hostPort = info.publishedPorts[PREVIEW_RELAY_PORT]
    if (hostPort === undefined) {
      return yield* new PreviewUnavailable({ id: containerId, reason: MADE_BEFORE_PREVIEWS })
    }
    hostPorts.set(containerId, hostPort)
    return hostPort
  })

  const startRelay = (containerId: string, access: RelayAccess) =>
    docker
      .execDetached(containerId, {
        argv: [...access.node, "-e", source],
        user: access.user,
        env: {
          PRBOX_RELAY_TOKEN: access.token,
          PRBOX_RELAY_PORT: String(PREVIEW_RELAY_PORT),
          PRBOX_RELAY_SERVICES: (access.services ?? []).join(",")
        }
      })
      .pipe(Effect.mapError((error) => new RuntimeError({ operation: "preview.relay-start", detail: error.message })))

  /** The relay's answer to `request`, starting the relay when nothing answers. */
  const ask = Effect.fn("NodeContainerRuntime.askRelay")(function* (
    containerId: string,
    request: string,
    access: RelayAccess
  ) {
    const cached = hostPorts.get(containerId)
    if (cached !== undefined) {
      const answer = yield* exchange(cached, request)
      if (answer._tag === "Ok" || answer._tag === "Closed") return answer
      // A restart moves the port; another container's relay may hold the old one now.
      hostPorts.delete(containerId)
    }
    const hostPort = yield* inspectHostPort(containerId)
    const answer = yield* exchange(hostPort, request)
    if (answer._tag !== "NoAnswer") return answer
    return yield* startLock(containerId).withPermit(
      Effect.gen(function* () {
        // Another request may have started it while this one waited.
        const again = yield* exchange(hostPort, request)
        if (again._tag !== "NoAnswer") return again
        yield* startRelay(containerId, access)
        return yield* exchange(hostPort, request).pipe(
          Effect.repeat({ schedule: RELAY_RETRY, until: (next) => next._tag !== "NoAnswer" }),
          Effect.timeoutOrElse({
            duration: RELAY_START_TIMEOUT,
            orElse: () =>
              Effect.fail(
                new PreviewUnavailable({
                  id: containerId,
                  reason: "prbox's preview relay did not start in the sandbox"
                })
              )
          })
        )
      })
    )
  })

  /** The stream after `ok`, else what the relay's answer means (`closed` only for a `connect`). */
  const opened = (
    containerId: string,
    port: number | undefined,
    answer: RelayAnswer,
    service?: string
  ): Effect.Effect<PortStream, RuntimeError | PortClosed> => {
    if (answer._tag === "Ok") return Effect.succeed(answer.stream)
    if (answer._tag === "Closed" && port !== undefined) {
      return Effect.fail(new PortClosed({ id: containerId, port, ...(service === undefined ? {} : { service }) }))
    }
    hostPorts.delete(containerId)
    switch (answer._tag) {
      case "Denied":
        return Effect.fail(relayError("the relay refused the sandbox's token"))
      case "Failed":
        return Effect.fail(relayError(answer.reason))
      default:
        return Effect.fail(relayError("the relay gave no answer"))
    }
  }

  return {
    connect: Effect.fn("NodeContainerRuntime.connect")(function* (
      containerId: string,
      port: number,
      access: RelayAccess,
      service?: string
    ) {
      // One word of the request line: what the name may be is the relay's to check (and the caller's).
      if (service !== undefined && !/^[\x21-\x7e]{1,253}$/.test(service)) {
        return yield* relayError("service refused: not one printable word")
      }
      const answer = yield* ask(containerId, connectRequest(access.token, port, service), access)
      return yield* opened(containerId, port, answer, service)
    }),
    listeningPorts: Effect.fn("NodeContainerRuntime.listeningPorts")(function* (
      containerId: string,
      access: RelayAccess
    ) {
      const answer = yield* ask(containerId, portsRequest(access.token), access)
      const stream = yield* opened(containerId, undefined, answer).pipe(
        Effect.catchTag("PortClosed", () => Effect.fail(relayError("unexpected answer")))
      )
      const text = yield* readToEnd(stream).pipe(Effect.mapError(relayError))
      const ports = listeningPorts(text)
      if (ports === undefined) return yield* relayError("the relay's list of listening ports could not be read")
      return ports
    }),
    /** Drops what is known of a removed container. */
    forget: (containerId: string) =>
      Effect.sync(() => {
        hostPorts.delete(containerId)
        starts.delete(containerId)
      })
  }
})

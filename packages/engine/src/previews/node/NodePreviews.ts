import { timingSafeEqual } from "node:crypto"
import {
  type DeclaredServicePort,
  declaredPorts,
  declaredServicePorts,
  type PreviewPort,
  portKey,
  previewPorts,
  type Sandbox,
  SandboxConflict,
  type SandboxId,
  servicePreviewPorts
} from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Clock, Effect, Layer, Option, Redacted, Stream } from "effect"
import { CODE_SERVER_MOUNT, CODE_SERVER_PORT, PREVIEW_RELAY_PORT } from "../../CodeServerSpec.ts"
import { Config } from "../../Config.ts"
import { ContainerRuntime, type RelayAccess } from "../../ContainerRuntime.ts"
import { userSpec } from "../../ContainerSpec.ts"
import { mapStoreErrors, PortClosed, PreviewUnavailable, RuntimeError } from "../../Errors.ts"
import { Lifecycle } from "../../Lifecycle.ts"
import { PreviewAddress } from "../../PreviewAddress.ts"
import { SandboxTools } from "../../SandboxTools.ts"
import { Ownership } from "../../workspace/Ownership.ts"
import { Previews } from "../Previews.ts"
import { checkedService, listeningServicePorts, reachableOf, relayServices } from "../ServiceTargets.ts"
import { previewToken, relayToken } from "./PreviewTokens.ts"

/** Discovery answers are reused this long, so many watchers cost one probe. */
const DISCOVERY_TTL_MS = 1_000
/** Preview traffic counts as activity; the row is touched at most this often. */
const TOUCH_EVERY_MS = 30_000
/** prbox's own listeners in a sandbox: never listed as the app's. */
const PRBOX_PORTS: ReadonlySet<number> = new Set([CODE_SERVER_PORT, PREVIEW_RELAY_PORT])

const sameSecret = (expected: string, given: string): boolean => {
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * Previews over the runtime: a running sandbox's ports reached through its
 * relay, its declared and discovered ports, its token and public ports. Public
 * ports and discovery answers live in memory and end when the sandbox leaves
 * `running` (a daemon restart closes every public port: fail closed).
 */
const make = Effect.gen(function* () {
  const repo = yield* SandboxRepo
  const runtime = yield* ContainerRuntime
  const lifecycle = yield* Lifecycle
  const tools = yield* SandboxTools
  const configs = yield* Config
  const previewPort = (yield* PreviewAddress).port
  const ownership = yield* Ownership

  /** Each sandbox's public ports by `portKey` (`3000`, `db:6379`). */
  const publicPorts = new Map<SandboxId, Set<string>>()
  const discovered = new Map<
    SandboxId,
    { readonly at: number; readonly ports: ReadonlyArray<number>; readonly services: ReadonlySet<string> }
  >()
  const touchedAt = new Map<SandboxId, number>()

  yield* lifecycle.events.pipe(
    Stream.runForEach((event) =>
      Effect.sync(() => {
        if (event._tag !== "StatusChanged" || event.status === "running") return
        publicPorts.delete(event.sandboxId)
        discovered.delete(event.sandboxId)
      })
    ),
    Effect.forkScoped
  )

  // The mounted code-server's node runs the relay; its path is fixed per distribution.
  const mountedNode = yield* Effect.cached(
    tools
      .codeServer(() => Effect.void)
      .pipe(
        Effect.map((distribution) => `${CODE_SERVER_MOUNT}/${distribution.node}`),
        Effect.mapError((error) => new RuntimeError({ operation: "preview.relay", detail: error.message }))
      )
  )

  const password = (row: Sandbox) =>
    row.accessPassword === null
      ? Effect.fail(new SandboxConflict({ id: row.id, reason: "it has no access password; delete and recreate it" }))
      : Effect.succeed(Redacted.value(row.accessPassword))

  /** The row of a running sandbox with a container, or why not with what to do. */
  const requireRunning = (row: Sandbox) => {
    if (row.status !== "running" || row.containerId === null || row.workspacePath === null) {
      return Effect.fail(
        new SandboxConflict({
          id: row.id,
          reason:
            row.status === "stopped" || row.status === "error"
              ? `it is ${row.status}; start it with \`prbox restart ${row.id}\``
              : `it is ${row.status}; previews need a running sandbox`
        })
      )
    }
    return Effect.succeed({ row, containerId: row.containerId })
  }

  const runningRow = (id: SandboxId) => Effect.flatMap(lifecycle.getRow(id), requireRunning)

  const relayOf = (row: Sandbox) =>
    Effect.gen(function* () {
      const node = row.environmentPlan?.codeServer === "included" ? "node" : yield* mountedNode
      const user = userSpec(ownership.sandboxUser)
      const services = relayServices(row.environmentPlan)
      return { token: relayToken(yield* password(row)), node: [node], user, services } satisfies RelayAccess
    })

  /** The runtime's errors name the container; callers know the sandbox. */
  const inSandbox =
    (id: SandboxId) =>
    <E>(error: E): E =>
      error instanceof PreviewUnavailable
        ? (new PreviewUnavailable({ id, reason: error.reason }) as E)
        : error instanceof PortClosed
          ? (new PortClosed({
              id,
              port: error.port,
              ...(error.service === undefined ? {} : { service: error.service })
            }) as E)
          : error

  // A failed touch only delays gc's view of the activity; the next traffic tries again.
  const activity = (id: SandboxId) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (now - (touchedAt.get(id) ?? 0) < TOUCH_EVERY_MS) return
      touchedAt.set(id, now)
      yield* repo
        .touch(id, now)
        .pipe(
          Effect.catch((error) =>
            Effect.sync(() => touchedAt.delete(id)).pipe(
              Effect.andThen(Effect.logWarning(`preview activity: ${error.message}`))
            )
          )
        )
    })

  /**
   * The ports listening in the sandbox of `sandbox` (a row just read), and
   * which of `declared` (other services' ports) take a connection, reused for
   * DISCOVERY_TTL_MS.
   */
  const discover = (sandbox: Sandbox, declared: ReadonlyArray<DeclaredServicePort>) =>
    Effect.gen(function* () {
      const id = sandbox.id
      const now = yield* Clock.currentTimeMillis
      const cached = discovered.get(id)
      if (cached !== undefined && now - cached.at < DISCOVERY_TTL_MS) return cached
      const { row, containerId } = yield* requireRunning(sandbox)
      const relay = yield* relayOf(row)
      const ports = yield* runtime.listeningPorts(containerId, relay).pipe(Effect.mapError(inSandbox(id)))
      const services = yield* listeningServicePorts(runtime, containerId, relay, declared).pipe(
        Effect.mapError(inSandbox(id))
      )
      const found = { at: now, ports, services }
      discovered.set(id, found)
      return found
    })

  const ports = Effect.fn("Previews.ports")(function* (id: SandboxId) {
    const row = yield* lifecycle.getRow(id)
    const config = yield* configs.load
    const plan = row.environmentPlan ?? { forwardPorts: [], portsAttributes: {} }
    const declared = declaredServicePorts(reachableOf(row.environmentPlan), plan)
    const found = row.status === "running" ? yield* discover(row, declared) : { ports: [], services: new Set<string>() }
    const open = publicPorts.get(id) ?? new Set()
    const own = previewPorts({
      declared: declaredPorts(plan, config.ports),
      listening: found.ports,
      public: [...open].flatMap((key) => (/^[0-9]+$/.test(key) ? [Number(key)] : [])),
      hidden: PRBOX_PORTS
    })
    return [...own, ...servicePreviewPorts(declared, found.services, open)] satisfies ReadonlyArray<PreviewPort>
  }, mapStoreErrors("preview.ports"))

  const connect = Effect.fn("Previews.connect")(function* (id: SandboxId, port: number, service?: string) {
    const { row, containerId } = yield* runningRow(id)
    // Only a service the host recorded: nothing the request or the container says is dialled.
    const target = service === undefined ? undefined : yield* checkedService(id, row.environmentPlan, service)
    const relay = yield* relayOf(row)
    yield* activity(id)
    return yield* runtime.connect(containerId, port, relay, target).pipe(Effect.mapError(inSandbox(id)))
  }, mapStoreErrors("preview.connect"))

  const knownPassword = (id: SandboxId) =>
    repo.findById(id).pipe(
      Effect.map((found) =>
        Option.match(found, {
          onNone: () => undefined,
          onSome: (row) => (row.accessPassword === null ? undefined : Redacted.value(row.accessPassword))
        })
      )
    )

  return Previews.of({
    previewPort,
    connect,
    ports,
    token: (id) =>
      lifecycle.getRow(id).pipe(
        Effect.flatMap((row) => Effect.map(password(row), (secret) => previewToken(secret, id))),
        mapStoreErrors("preview.token")
      ),
    verifyToken: (id, credential) =>
      knownPassword(id).pipe(
        Effect.map((secret) => secret !== undefined && sameSecret(previewToken(secret, id), credential)),
        mapStoreErrors("preview.auth")
      ),
    verifyPassword: (id, given) =>
      knownPassword(id).pipe(
        Effect.map((secret) => secret !== undefined && sameSecret(secret, given)),
        mapStoreErrors("preview.login")
      ),
    setPublic: (id, port, open, service) =>
      runningRow(id).pipe(
        Effect.tap(({ row }) =>
          service === undefined ? Effect.void : checkedService(id, row.environmentPlan, service)
        ),
        Effect.andThen(
          Effect.sync(() => {
            const set = publicPorts.get(id) ?? new Set<string>()
            publicPorts.set(id, set)
            if (open) set.add(portKey(port, service))
            else set.delete(portKey(port, service))
          })
        ),
        mapStoreErrors("preview.public")
      ),
    isPublic: (id, port, service) => Effect.sync(() => publicPorts.get(id)?.has(portKey(port, service)) === true),
    activity
  })
})

export const layer = Layer.effect(Previews, make).pipe(Layer.provide(Ownership.layer))

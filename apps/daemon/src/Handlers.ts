import { isLive, PRBOX_VERSION, type PreviewPort, previewPathUrl, previewUrl, type SandboxId } from "@prbox/domain"
import { Config, Previews, SandboxService, WarmPool } from "@prbox/engine"
import { Conflict, MAX_LOG_PAGE, type PortList, PrboxApi, SERVED_API_VERSIONS, toView } from "@prbox/protocol"
import { Clock, Effect, Layer, Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { DaemonInfo } from "./DaemonInfo.ts"
import { sandboxEvents } from "./Events.ts"
import { exec } from "./Exec.ts"
import { FilesHandlers } from "./FilesHandlers.ts"
import { JobsHandlers } from "./JobsHandlers.ts"
import { sandboxListCache } from "./ListCache.ts"
import { Maintenance } from "./Maintenance.ts"
import { api } from "./Mapping.ts"
import { PrebuildsHandlers } from "./PrebuildsHandlers.ts"
import { resolve } from "./Resolve.ts"

export const DAEMON_VERSION = PRBOX_VERSION
const DEFAULT_LOG_PAGE = 200

const MetaHandlers = HttpApiBuilder.group(PrboxApi, "meta", (handlers) =>
  Effect.gen(function* () {
    const info = yield* DaemonInfo
    return handlers
      .handle("version", () =>
        Effect.succeed({
          name: "prboxd",
          version: DAEMON_VERSION,
          api: SERVED_API_VERSIONS,
          pid: process.pid,
          home: info.home,
          startedAt: info.startedAt
        })
      )
      .handle("health", () =>
        Effect.map(Clock.currentTimeMillis, (now) => ({
          status: "ok" as const,
          uptimeMs: Math.max(0, now - info.startedAt),
          ...info.inFlight()
        }))
      )
  })
)

/** The wire list: each port with its host-form and path-form URLs. */
const portList = (id: SandboxId, previewPort: number, ports: ReadonlyArray<PreviewPort>): PortList => ({
  previewPort,
  ports: ports.map((port) => ({
    ...port,
    url: previewUrl(id, port.port, previewPort, port.service),
    pathUrl: previewPathUrl(id, port.port, previewPort, port.service)
  }))
})

const SandboxesHandlers = HttpApiBuilder.group(PrboxApi, "sandboxes", (handlers) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    const config = yield* Config
    const previews = yield* Previews
    const list = sandboxListCache(sandboxes)
    const ports = (id: SandboxId) =>
      api(previews.ports(id)).pipe(Effect.map((found) => portList(id, previews.previewPort, found)))
    return handlers
      .handle("open", ({ payload }) =>
        api(
          sandboxes.open({
            input: payload.input,
            ...(payload.pr === undefined ? {} : { pr: payload.pr }),
            ...(payload.ref === undefined ? {} : { ref: payload.ref }),
            ...(payload.devcontainer === undefined ? {} : { devcontainer: payload.devcontainer })
          })
        ).pipe(Effect.map(toView))
      )
      .handle("list", ({ query }) => list(query.all === true))
      .handle("resolve", ({ query }) => resolve(sandboxes, config, query.q, query.pr).pipe(Effect.map(toView)))
      .handle("get", ({ params }) => api(sandboxes.get(params.id)).pipe(Effect.map(toView)))
      .handle("stop", ({ params }) => api(sandboxes.stop(params.id)).pipe(Effect.map(toView)))
      .handle("restart", ({ params }) => api(sandboxes.restart(params.id)).pipe(Effect.map(toView)))
      .handle("update", ({ params, payload }) =>
        api(sandboxes.update(params.id, { force: payload.force })).pipe(
          Effect.map((report) => ({ ...report, sandbox: toView(report.sandbox) }))
        )
      )
      .handle("push", ({ params, payload }) =>
        api(
          sandboxes.push(params.id, {
            confirm: payload.confirm,
            ...(payload.to === undefined ? {} : { to: payload.to }),
            ...(payload.expectTip === undefined ? {} : { expectTip: payload.expectTip })
          })
        ).pipe(Effect.map((report) => ({ ...report, sandbox: toView(report.sandbox) })))
      )
      .handle("rebuild", ({ params }) => api(sandboxes.rebuild(params.id)).pipe(Effect.map(toView)))
      .handle("delete", ({ params, query }) =>
        Effect.gen(function* () {
          const row = yield* api(sandboxes.get(params.id))
          if (isLive(row) && query.force !== true) {
            return yield* new Conflict({
              message: `sandbox ${row.id} is ${row.status}; stop it first or pass --force`
            })
          }
          yield* api(sandboxes.delete(params.id))
        })
      )
      .handle("logs", ({ params, query }) =>
        Effect.gen(function* () {
          const after = query.after ?? 0
          const limit = Math.min(query.limit ?? DEFAULT_LOG_PAGE, MAX_LOG_PAGE)
          yield* api(sandboxes.get(params.id))
          const lines = yield* api(sandboxes.logs(params.id, { afterSeq: after, limit: limit + 1 }))
          const page = lines.slice(0, limit)
          return { lines: page, next: page.at(-1)?.seq ?? after, more: lines.length > limit }
        })
      )
      .handle("events", ({ params, query }) =>
        // The id is checked before the answer starts, so an unknown one is a 404.
        api(sandboxes.get(params.id)).pipe(Effect.as(sandboxEvents(sandboxes, params.id, query.after ?? 0)))
      )
      .handle("ports", ({ params }) => ports(params.id))
      .handle("setPublic", ({ params, payload }) =>
        api(previews.setPublic(params.id, params.port, payload.public, payload.service)).pipe(
          Effect.andThen(() => ports(params.id))
        )
      )
      .handle("previewToken", ({ params }) => api(previews.token(params.id)).pipe(Effect.map((token) => ({ token }))))
      .handle("allEvents", () => Effect.succeed(sandboxes.events))
      .handle("exec", ({ params, payload }) => exec(sandboxes, params.id, payload))
      .handle("touch", ({ params }) => api(sandboxes.touch(params.id)))
      .handle("password", ({ params }) =>
        Effect.gen(function* () {
          const row = yield* api(sandboxes.get(params.id))
          if (row.accessPassword === null) {
            return yield* new Conflict({ message: `sandbox ${row.id} is a legacy sandbox without a password` })
          }
          return { id: row.id, password: Redacted.value(row.accessPassword) }
        })
      )
  })
)

const MaintenanceHandlers = HttpApiBuilder.group(PrboxApi, "maintenance", (handlers) =>
  Effect.gen(function* () {
    const maintenance = yield* Maintenance
    const pool = yield* WarmPool
    return handlers
      .handle("reconcile", () => maintenance.reconcile)
      .handle("gc", ({ payload }) => maintenance.gc(payload))
      .handle("prune", ({ payload }) => maintenance.prune(payload))
      .handle("pool", () =>
        api(pool.list).pipe(
          Effect.map((entries) =>
            entries.map((entry) => ({
              id: entry.id,
              host: entry.host,
              repository: entry.repository,
              keyPrefix: entry.key.slice(0, 12),
              state: entry.state,
              createdAt: entry.createdAt,
              port: entry.hostPort
            }))
          )
        )
      )
  })
)

/** The daemon API, implemented on the engine. */
export const ApiHandlers = HttpApiBuilder.layer(PrboxApi).pipe(
  Layer.provide([MetaHandlers, SandboxesHandlers, FilesHandlers, JobsHandlers, MaintenanceHandlers, PrebuildsHandlers])
)

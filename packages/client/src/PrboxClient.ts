import type { SandboxId } from "@prbox/domain"
import {
  API_VERSION,
  type DiffRequest,
  type DiffResult,
  type ExecRequest,
  type ExecResult,
  type FileContent,
  type FileEdited,
  type FileEditRequest,
  type FileListing,
  type FileWriteRequest,
  type FileWritten,
  type GcReport,
  type GcRequest,
  type Health,
  type JobOutput,
  type JobRequest,
  type JobView,
  type LogPage,
  type OpenRequest,
  type Password,
  type PoolList,
  type PortList,
  PrboxApi,
  type PrebuildEvent,
  type PrebuildStatus,
  type PreviewToken,
  type PruneReport,
  type PruneRequest,
  type PullRequestFile,
  type PullRequestSide,
  type PushReport,
  type PushRequest,
  type ReconcileReport,
  type SandboxEvent,
  type SandboxView,
  type UpdateReport,
  type VersionInfo
} from "@prbox/protocol"
import { Context, Duration, Effect, Layer, Stream } from "effect"
import type { HttpClient } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { type ClientError, IncompatibleDaemon, normalizeError, ProtocolError } from "./ClientErrors.ts"

export interface ClientOptions {
  readonly socketPath: string
  /** Longest wait for an ordinary call; exec waits for its own timeout on top. */
  readonly requestTimeout?: Duration.Input
}

export interface PrboxClientShape {
  readonly socketPath: string
  readonly version: Effect.Effect<VersionInfo, ClientError>
  /** Fails with IncompatibleDaemon unless the daemon serves this client's API generation. */
  readonly checkVersion: Effect.Effect<VersionInfo, ClientError>
  readonly health: Effect.Effect<Health, ClientError>
  readonly open: (request: OpenRequest) => Effect.Effect<SandboxView, ClientError>
  readonly list: (options?: { readonly all?: boolean }) => Effect.Effect<ReadonlyArray<SandboxView>, ClientError>
  /** A unique id prefix, or a pull request reference (with `pr` for a plain git remote). */
  readonly resolve: (query: string, pr?: number) => Effect.Effect<SandboxView, ClientError>
  readonly get: (id: SandboxId) => Effect.Effect<SandboxView, ClientError>
  readonly stop: (id: SandboxId) => Effect.Effect<SandboxView, ClientError>
  readonly restart: (id: SandboxId) => Effect.Effect<SandboxView, ClientError>
  /** Moves a running sandbox's workspace to its PR's new head (`force`: past a force-push). */
  readonly update: (id: SandboxId, options: { readonly force: boolean }) => Effect.Effect<UpdateReport, ClientError>
  /** The sandbox's new commits shown (`confirm` false) or pushed to its PR's branch (`prbox push`). */
  readonly push: (id: SandboxId, request: PushRequest) => Effect.Effect<PushReport, ClientError>
  /** A new container on the kept workspace; follow it like a restart. */
  readonly rebuild: (id: SandboxId) => Effect.Effect<SandboxView, ClientError>
  /** Deletes the sandbox: container, workspace and row (`force`: stop a live one first). */
  readonly delete: (id: SandboxId, options?: { readonly force?: boolean }) => Effect.Effect<void, ClientError>
  readonly logs: (
    id: SandboxId,
    options?: { readonly after?: number; readonly limit?: number }
  ) => Effect.Effect<LogPage, ClientError>
  /** The log after `after` (0: from the start), then live events of the sandbox; never ends by itself. */
  readonly events: (id: SandboxId, options?: { readonly after?: number }) => Stream.Stream<SandboxEvent, ClientError>
  /** Live events of every sandbox, from now on. */
  readonly allEvents: Stream.Stream<SandboxEvent, ClientError>
  readonly exec: (id: SandboxId, request: ExecRequest) => Effect.Effect<ExecResult, ClientError>
  readonly touch: (id: SandboxId) => Effect.Effect<void, ClientError>
  readonly password: (id: SandboxId) => Effect.Effect<Password, ClientError>
  /** The sandbox's declared and listening ports with their preview URLs (asking is watching: it discovers afresh). */
  readonly ports: (id: SandboxId) => Effect.Effect<PortList, ClientError>
  /** Opens `port` without auth until the sandbox stops (`open: false` closes it); the ports after. */
  /** With `service`, that Compose service's port. */
  readonly setPublic: (
    id: SandboxId,
    port: number,
    open: boolean,
    service?: string
  ) => Effect.Effect<PortList, ClientError>
  /** What scripts send as `Authorization: Bearer <token>` to the sandbox's previews. */
  readonly previewToken: (id: SandboxId) => Effect.Effect<PreviewToken, ClientError>
  /** A file of the workspace (path relative to it), or some of its lines; bounded by `maxBytes`. */
  readonly readFile: (
    id: SandboxId,
    request: {
      readonly path: string
      readonly startLine?: number
      readonly endLine?: number
      readonly maxBytes?: number
    }
  ) => Effect.Effect<FileContent, ClientError>
  readonly listFiles: (
    id: SandboxId,
    request: { readonly path?: string; readonly depth?: number }
  ) => Effect.Effect<FileListing, ClientError>
  readonly writeFile: (id: SandboxId, request: FileWriteRequest) => Effect.Effect<FileWritten, ClientError>
  readonly editFile: (id: SandboxId, request: FileEditRequest) => Effect.Effect<FileEdited, ClientError>
  readonly diff: (id: SandboxId, request: DiffRequest) => Effect.Effect<DiffResult, ClientError>
  /** One side of a file the PR changes (its merge-base's or its head's), from the daemon's mirror. */
  readonly pullRequestFile: (
    id: SandboxId,
    query: { readonly side: PullRequestSide; readonly path: string }
  ) => Effect.Effect<PullRequestFile, ClientError>
  /** Starts a background job; read its output with `readJob`. */
  readonly startJob: (id: SandboxId, request: JobRequest) => Effect.Effect<JobView, ClientError>
  readonly listJobs: (id: SandboxId) => Effect.Effect<ReadonlyArray<JobView>, ClientError>
  readonly readJob: (
    id: SandboxId,
    jobId: string,
    options?: { readonly offset?: number; readonly maxBytes?: number }
  ) => Effect.Effect<JobOutput, ClientError>
  readonly killJob: (id: SandboxId, jobId: string) => Effect.Effect<JobView, ClientError>
  readonly reconcile: Effect.Effect<ReconcileReport, ClientError>
  readonly gc: (request: GcRequest) => Effect.Effect<GcReport, ClientError>
  readonly prune: (request: PruneRequest) => Effect.Effect<PruneReport, ClientError>
  /** Prebuilds: on or off, disk used of the cap, each one. */
  readonly prebuilds: Effect.Effect<PrebuildStatus, ClientError>
  /** The warm pool's containers (never their passwords). */
  readonly pool: Effect.Effect<PoolList, ClientError>
  /** The input's repository's base branch made into a prebuild now: progress lines, then how it ended. */
  readonly makePrebuild: (request: OpenRequest) => Stream.Stream<PrebuildEvent, ClientError>
}

export class PrboxClient extends Context.Service<PrboxClient, PrboxClientShape>()("prbox/client/PrboxClient") {
  /**
   * A typed client of the daemon API over its Unix socket; needs an HttpClient
   * that dials that socket (NodePrboxClient.layer provides one).
   */
  static readonly layer = (options: ClientOptions): Layer.Layer<PrboxClient, never, HttpClient.HttpClient> =>
    Layer.effect(PrboxClient, make(options))
}

/**
 * Every request goes over the Unix socket; the host is never looked up. It is
 * localhost because VS Code patches Node's http module for its proxy support
 * and, for any other host, swaps the socket-dialing agent out for a DNS lookup.
 */
const BASE_URL = "http://localhost"

/** The client's calls, on an HttpClient that dials the daemon's socket (PrboxClient.layer). */
const make = (options: ClientOptions) =>
  Effect.gen(function* () {
    const api = yield* HttpApiClient.make(PrboxApi, { baseUrl: BASE_URL })
    const socketPath = options.socketPath
    const normalize = normalizeError(socketPath)
    const timeout = Duration.fromInputUnsafe(options.requestTimeout ?? "30 seconds")

    const call = <A, E>(effect: Effect.Effect<A, E>, limit: Duration.Duration = timeout) =>
      effect.pipe(
        Effect.mapError(normalize),
        Effect.timeoutOrElse({
          duration: limit,
          orElse: () =>
            Effect.fail(new ProtocolError({ message: `prboxd did not answer within ${Duration.format(limit)}` }))
        })
      )

    const stream = <A, E1, E2>(effect: Effect.Effect<Stream.Stream<A, E1>, E2>) =>
      Stream.unwrap(call(effect)).pipe(Stream.mapError(normalize))

    const version = call(api.meta.version())

    return PrboxClient.of({
      socketPath,
      version,
      checkVersion: Effect.flatMap(
        version.pipe(
          Effect.catch(
            (error): Effect.Effect<never, ClientError> =>
              error._tag === "DaemonUnreachable"
                ? Effect.fail(error)
                : Effect.fail(
                    new IncompatibleDaemon({
                      message: `the daemon at ${socketPath} does not answer GET /version (${error.message}); it is older than this client: stop it with \`prbox daemon stop\` and run the command again`
                    })
                  )
          )
        ),
        (info) =>
          info.api.includes(API_VERSION)
            ? Effect.succeed(info)
            : Effect.fail(
                new IncompatibleDaemon({
                  message: `prboxd ${info.version} (pid ${info.pid}) serves API v${info.api.join(", v")}, this client needs v${API_VERSION}: restart it with \`prbox daemon stop && prbox daemon start\``
                })
              )
      ),
      health: call(api.meta.health()),
      open: (payload) => call(api.sandboxes.open({ payload }), Duration.sum(timeout, Duration.minutes(2))),
      list: (opts = {}) => call(api.sandboxes.list({ query: opts.all === true ? { all: true } : {} })),
      resolve: (q, pr) => call(api.sandboxes.resolve({ query: pr === undefined ? { q } : { q, pr } })),
      get: (id) => call(api.sandboxes.get({ params: { id } })),
      stop: (id) => call(api.sandboxes.stop({ params: { id } }), Duration.sum(timeout, Duration.minutes(1))),
      restart: (id) => call(api.sandboxes.restart({ params: { id } })),
      // A fetch of the PR (up to 10 minutes) and its updateContentCommand.
      update: (id, options) =>
        call(
          api.sandboxes.update({ params: { id }, payload: { force: options.force } }),
          Duration.sum(timeout, Duration.minutes(30))
        ),
      // A fetch of the PR and a push over the network (each up to 10 minutes).
      push: (id, payload) =>
        call(api.sandboxes.push({ params: { id }, payload }), Duration.sum(timeout, Duration.minutes(25))),
      rebuild: (id) => call(api.sandboxes.rebuild({ params: { id } })),
      delete: (id, opts = {}) =>
        call(
          api.sandboxes.delete({ params: { id }, query: opts.force === true ? { force: true } : {} }),
          Duration.sum(timeout, Duration.minutes(1))
        ),
      logs: (id, opts = {}) =>
        call(
          api.sandboxes.logs({
            params: { id },
            query: {
              ...(opts.after === undefined ? {} : { after: opts.after }),
              ...(opts.limit === undefined ? {} : { limit: opts.limit })
            }
          })
        ),
      events: (id, opts = {}) =>
        stream(api.sandboxes.events({ params: { id }, query: opts.after === undefined ? {} : { after: opts.after } })),
      allEvents: stream(api.sandboxes.allEvents()),
      exec: (id, payload) =>
        call(
          api.sandboxes.exec({ params: { id }, payload }),
          Duration.sum(timeout, Duration.millis(payload.timeoutMs ?? 5 * 60_000))
        ),
      touch: (id) => call(api.sandboxes.touch({ params: { id } })),
      password: (id) => call(api.sandboxes.password({ params: { id } })),
      ports: (id) => call(api.sandboxes.ports({ params: { id } })),
      setPublic: (id, port, open, service) =>
        call(
          api.sandboxes.setPublic({
            params: { id, port },
            payload: { public: open, ...(service === undefined ? {} : { service }) }
          })
        ),
      previewToken: (id) => call(api.sandboxes.previewToken({ params: { id } })),
      readFile: (id, query) => call(api.files.read({ params: { id }, query })),
      listFiles: (id, query) => call(api.files.list({ params: { id }, query })),
      writeFile: (id, payload) => call(api.files.write({ params: { id }, payload })),
      editFile: (id, payload) => call(api.files.edit({ params: { id }, payload })),
      // `base` may fetch the PR's base branch first.
      diff: (id, payload) =>
        call(api.files.diff({ params: { id }, payload }), Duration.sum(timeout, Duration.minutes(5))),
      pullRequestFile: (id, query) =>
        call(api.files.pullRequestFile({ params: { id }, query }), Duration.sum(timeout, Duration.minutes(5))),
      startJob: (id, payload) => call(api.jobs.start({ params: { id }, payload })),
      listJobs: (id) => call(api.jobs.list({ params: { id } })),
      readJob: (id, jobId, query = {}) => call(api.jobs.read({ params: { id, jobId }, query })),
      killJob: (id, jobId) => call(api.jobs.kill({ params: { id, jobId } })),
      reconcile: call(api.maintenance.reconcile(), Duration.sum(timeout, Duration.minutes(5))),
      gc: (payload) => call(api.maintenance.gc({ payload }), Duration.sum(timeout, Duration.minutes(5))),
      prune: (payload) => call(api.maintenance.prune({ payload }), Duration.sum(timeout, Duration.minutes(5))),
      prebuilds: call(api.prebuilds.status()),
      pool: call(api.maintenance.pool()),
      makePrebuild: (payload) => stream(api.prebuilds.make({ payload }))
    })
  })

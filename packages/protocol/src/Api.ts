import { SandboxId } from "@prbox/domain"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ApiErrors } from "./Errors.ts"
import { PoolList } from "./Pool.ts"
import { PrebuildEvent, PrebuildStatus } from "./Prebuilds.ts"
import {
  ExecRequest,
  ExecResult,
  GcReport,
  GcRequest,
  Health,
  LogPage,
  OpenRequest,
  Password,
  PortList,
  PreviewToken,
  PruneReport,
  PruneRequest,
  PublicRequest,
  PushReport,
  PushRequest,
  ReconcileReport,
  SandboxEvent,
  SandboxList,
  SandboxView,
  UpdateReport,
  UpdateRequest,
  VersionInfo
} from "./Wire.ts"
import {
  DiffRequest,
  DiffResult,
  FileContent,
  FileEdited,
  FileEditRequest,
  FileListing,
  FileListQuery,
  FileReadQuery,
  FileWriteRequest,
  FileWritten,
  JobList,
  JobOutput,
  JobReadQuery,
  JobRequest,
  JobView,
  PullRequestFile,
  PullRequestFileQuery
} from "./Workspace.ts"

const error = ApiErrors
const byId = { id: SandboxId }
const Seq = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
/** A TCP port inside a sandbox. */
const byPort = { id: SandboxId, port: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 })) }
const Limit = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))

/** Streams are NDJSON: one JSON object per line, flushed as it happens. */
export const EventStream = HttpApiSchema.StreamNdjson({ schema: SandboxEvent })

/**
 * `GET /version` stays outside `/v1` so that any client can ask any daemon
 * which API generations it serves, and say "this daemon is too old/new".
 */
export class Meta extends HttpApiGroup.make("meta")
  .add(HttpApiEndpoint.get("version", "/version", { success: VersionInfo, error }))
  .add(HttpApiEndpoint.get("health", "/v1/health", { success: Health, error })) {}

export class Sandboxes extends HttpApiGroup.make("sandboxes")
  .add(HttpApiEndpoint.post("open", "/sandboxes", { payload: OpenRequest, success: SandboxView, error }))
  .add(
    HttpApiEndpoint.get("list", "/sandboxes", {
      query: { all: Schema.optionalKey(Schema.Boolean) },
      success: SandboxList,
      error
    })
  )
  .add(
    HttpApiEndpoint.get("resolve", "/resolve", {
      query: { q: Schema.String.check(Schema.isMinLength(1)), pr: Schema.optionalKey(Limit) },
      success: SandboxView,
      error
    })
  )
  .add(HttpApiEndpoint.get("get", "/sandboxes/:id", { params: byId, success: SandboxView, error }))
  .add(HttpApiEndpoint.post("stop", "/sandboxes/:id/stop", { params: byId, success: SandboxView, error }))
  .add(HttpApiEndpoint.post("restart", "/sandboxes/:id/restart", { params: byId, success: SandboxView, error }))
  .add(
    HttpApiEndpoint.post("update", "/sandboxes/:id/update", {
      params: byId,
      payload: UpdateRequest,
      success: UpdateReport,
      error
    })
  )
  .add(
    HttpApiEndpoint.post("push", "/sandboxes/:id/push", {
      params: byId,
      payload: PushRequest,
      success: PushReport,
      error
    })
  )
  .add(HttpApiEndpoint.post("rebuild", "/sandboxes/:id/rebuild", { params: byId, success: SandboxView, error }))
  .add(
    // Deleting a sandbox: its container, workspace and row (`force` stops a live one first).
    HttpApiEndpoint.delete("delete", "/sandboxes/:id", {
      params: byId,
      query: { force: Schema.optionalKey(Schema.Boolean) },
      error
    })
  )
  .add(
    HttpApiEndpoint.get("logs", "/sandboxes/:id/logs", {
      params: byId,
      query: { after: Schema.optionalKey(Seq), limit: Schema.optionalKey(Limit) },
      success: LogPage,
      error
    })
  )
  .add(
    HttpApiEndpoint.get("events", "/sandboxes/:id/events", {
      params: byId,
      query: { after: Schema.optionalKey(Seq) },
      success: EventStream,
      error
    })
  )
  .add(
    HttpApiEndpoint.post("exec", "/sandboxes/:id/exec", {
      params: byId,
      payload: ExecRequest,
      success: ExecResult,
      error
    })
  )
  .add(HttpApiEndpoint.post("touch", "/sandboxes/:id/touch", { params: byId, error }))
  .add(HttpApiEndpoint.get("password", "/sandboxes/:id/password", { params: byId, success: Password, error }))
  .add(
    // Declared and listening ports with their preview URLs; asking is watching (it discovers afresh).
    HttpApiEndpoint.get("ports", "/sandboxes/:id/ports", { params: byId, success: PortList, error })
  )
  .add(
    HttpApiEndpoint.post("setPublic", "/sandboxes/:id/ports/:port/public", {
      params: byPort,
      payload: PublicRequest,
      success: PortList,
      error
    })
  )
  .add(
    HttpApiEndpoint.get("previewToken", "/sandboxes/:id/preview-token", { params: byId, success: PreviewToken, error })
  )
  .add(HttpApiEndpoint.get("allEvents", "/events", { success: EventStream, error }))
  .prefix("/v1") {}

const byJob = { id: SandboxId, jobId: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9-]{1,64}$/)) }

/** A running sandbox's workspace: its files and diffs (paths relative to the workspace, confined to it). */
export class Files extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.get("read", "/sandboxes/:id/files/read", {
      params: byId,
      query: FileReadQuery,
      success: FileContent,
      error
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/sandboxes/:id/files/list", {
      params: byId,
      query: FileListQuery,
      success: FileListing,
      error
    })
  )
  .add(
    HttpApiEndpoint.post("write", "/sandboxes/:id/files/write", {
      params: byId,
      payload: FileWriteRequest,
      success: FileWritten,
      error
    })
  )
  .add(
    HttpApiEndpoint.post("edit", "/sandboxes/:id/files/edit", {
      params: byId,
      payload: FileEditRequest,
      success: FileEdited,
      error
    })
  )
  .add(
    HttpApiEndpoint.post("diff", "/sandboxes/:id/diff", {
      params: byId,
      payload: DiffRequest,
      success: DiffResult,
      error
    })
  )
  .add(
    HttpApiEndpoint.get("pullRequestFile", "/sandboxes/:id/pull-request/file", {
      params: byId,
      query: PullRequestFileQuery,
      success: PullRequestFile,
      error
    })
  )
  .prefix("/v1") {}

/** Background commands of a running sandbox, read by offset. */
export class Jobs extends HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.post("start", "/sandboxes/:id/jobs", { params: byId, payload: JobRequest, success: JobView, error })
  )
  .add(HttpApiEndpoint.get("list", "/sandboxes/:id/jobs", { params: byId, success: JobList, error }))
  .add(
    HttpApiEndpoint.get("read", "/sandboxes/:id/jobs/:jobId", {
      params: byJob,
      query: JobReadQuery,
      success: JobOutput,
      error
    })
  )
  .add(HttpApiEndpoint.post("kill", "/sandboxes/:id/jobs/:jobId/kill", { params: byJob, success: JobView, error }))
  .prefix("/v1") {}

export class Maintenance extends HttpApiGroup.make("maintenance")
  .add(HttpApiEndpoint.post("reconcile", "/reconcile", { success: ReconcileReport, error }))
  .add(HttpApiEndpoint.post("gc", "/gc", { payload: GcRequest, success: GcReport, error }))
  .add(HttpApiEndpoint.post("prune", "/prune", { payload: PruneRequest, success: PruneReport, error }))
  .add(HttpApiEndpoint.get("pool", "/pool", { success: PoolList, error }))
  .prefix("/v1") {}

export class Prebuilds extends HttpApiGroup.make("prebuilds")
  .add(HttpApiEndpoint.get("status", "/prebuilds", { success: PrebuildStatus, error }))
  .add(
    // The input's repository's base branch made into a prebuild now: its progress, then how it ended.
    HttpApiEndpoint.post("make", "/prebuilds", {
      payload: OpenRequest,
      success: HttpApiSchema.StreamNdjson({ schema: PrebuildEvent }),
      error
    })
  )
  .prefix("/v1") {}

/** The daemon's API, defined once: the daemon implements it, the CLI and the VS Code extension call it. */
export class PrboxApi extends HttpApi.make("prbox").add(Meta, Sandboxes, Files, Jobs, Maintenance, Prebuilds) {}

/** Paths of streaming endpoints: they do not count against the request limit, but are capped themselves. */
export const isStreamPath = (path: string): boolean =>
  path === "/v1/events" || /^\/v1\/sandboxes\/[^/]+\/events$/.test(path)

/** Cheap endpoints answered even when the daemon is at its request limit. */
export const isProbePath = (path: string): boolean => path === "/version" || path === "/v1/health"

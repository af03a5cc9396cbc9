import { PreviewPort, Sandbox, SandboxEvent, SandboxId, Timestamp } from "@prbox/domain"
import { Schema } from "effect"

export { API_HEADER, API_VERSION, SERVED_API_VERSIONS, servesThisApi } from "./ApiVersion.ts"

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * A sandbox as the daemon shows it. Deliberately not the domain row: the
 * access password is absent (`hasPassword` says whether one exists; the
 * `password` call returns it), the environment plan stays inside (it may
 * carry the user's env values), and `url` is derived from the port.
 */
export const SandboxView = Sandbox.mapFields(
  ({ accessPassword: _password, environmentPlan: _plan, remoteUrl: _remote, ...fields }) => ({
    ...fields,
    /** `http://127.0.0.1:<port>/` once a port is published. */
    url: Schema.NullOr(Schema.String),
    hasPassword: Schema.Boolean,
    /** The workspace's folder inside the container, once the environment is chosen. */
    workspaceFolder: Schema.NullOr(Schema.String)
  })
)
export type SandboxView = typeof SandboxView.Type

export const sandboxUrl = (hostPort: number | null): string | null =>
  hostPort === null ? null : `http://127.0.0.1:${hostPort}/`

/** The wire view of a row; the password never leaves this function. */
export const toView = ({ accessPassword, environmentPlan, remoteUrl: _remote, ...row }: Sandbox): SandboxView => ({
  ...row,
  url: sandboxUrl(row.hostPort),
  hasPassword: accessPassword !== null,
  workspaceFolder: environmentPlan === null ? null : environmentPlan.workspaceFolder
})

export const SandboxList = Schema.Array(SandboxView)

/** `prbox update --force`: past a force-push or local commits (keeping them on a branch). */
export const UpdateRequest = Schema.Struct({ force: Schema.Boolean })
export type UpdateRequest = typeof UpdateRequest.Type

/** What `prbox update` did: the workspace's head before and after, and the `updateContentCommand` run. */
export const UpdateReport = Schema.Struct({
  sandbox: SandboxView,
  outcome: Schema.Literals(["up-to-date", "fast-forwarded", "forced"]),
  from: Schema.String,
  to: Schema.String,
  /** `--force`: the branch holding the old head and any local commits. */
  keptBranch: Schema.NullOr(Schema.String),
  updateContent: Schema.Struct({ ran: Schema.Boolean, error: Schema.NullOr(Schema.String) })
})
export type UpdateReport = typeof UpdateReport.Type

/**
 * `prbox push`: `confirm` false only checks and shows the commits; true
 * pushes them, refused if the sandbox's tip is no longer `expectTip` (the
 * one shown). `to`: a branch of the PR's remote (a plain git remote needs it).
 */
export const PushRequest = Schema.Struct({
  confirm: Schema.Boolean,
  to: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255))),
  expectTip: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[0-9a-f]{40}([0-9a-f]{24})?$/)))
})
export type PushRequest = typeof PushRequest.Type

/** One commit a push brings; author and subject are the sandbox's text. */
export const PushCommit = Schema.Struct({
  commit: Schema.String,
  author: Schema.String,
  subject: Schema.String,
  files: Schema.Array(Schema.String)
})
export type PushCommit = typeof PushCommit.Type

/** What `prbox push` showed or pushed: where to, on top of which head, and the commits (newest first). */
export const PushReport = Schema.Struct({
  sandbox: SandboxView,
  remote: Schema.String,
  branch: Schema.String,
  head: Schema.String,
  tip: Schema.String,
  commits: Schema.Array(PushCommit),
  pushed: Schema.Boolean
})
export type PushReport = typeof PushReport.Type

/** `prbox open`: anything the pull request parser accepts, with `--pr`, `--ref` and `--devcontainer`. */
export const OpenRequest = Schema.Struct({
  input: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4096)),
  pr: Schema.optionalKey(PositiveInt),
  ref: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1024))),
  /** One of the PR's named configurations, `.devcontainer/<name>/devcontainer.json`. */
  devcontainer: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[A-Za-z0-9._-]{1,100}$/)))
})
export type OpenRequest = typeof OpenRequest.Type

/**
 * The events the stream carries and a log page holds: the domain's union of a
 * status change (`StatusChanged`) and a progress line (`Progress`). Clients
 * switch on `_tag` (`isSettling`, `describeEvent` in @prbox/domain).
 */
export { Progress, SandboxEvent, StatusChanged } from "@prbox/domain"

/**
 * One page of a sandbox's log: the same events the stream carries. Ask again
 * with `after = next` for the following page.
 */
export const LogPage = Schema.Struct({
  lines: Schema.Array(SandboxEvent),
  /** The last sequence number in this page (or the `after` asked for, when empty). */
  next: NonNegativeInt,
  /** True when the page was cut at `limit`: more lines follow. */
  more: Schema.Boolean
})
export type LogPage = typeof LogPage.Type

export const MAX_LOG_PAGE = 1000
export const MAX_EXEC_OUTPUT = 1024 * 1024
export const MAX_EXEC_TIMEOUT_MS = 60 * 60_000
export const DEFAULT_EXEC_TIMEOUT_MS = 5 * 60_000

/** A path relative to the sandbox's workspace (the daemon refuses one that leaves it). */
export const WorkspacePathParam = Schema.String.check(Schema.isMaxLength(4096))

/** Extra environment variables for one command: names as a shell takes them, values bounded. */
export const CommandEnv = Schema.Record(
  Schema.String.check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/)),
  Schema.String.check(Schema.isMaxLength(32 * 1024))
).check(Schema.isMaxProperties(64))

const Argv = Schema.Array(Schema.String.check(Schema.isMaxLength(65536))).check(
  Schema.isMinLength(1),
  Schema.isMaxLength(1024)
)

export const ExecRequest = Schema.Struct({
  /** Run as is (no shell): `["sh", "-c", "..."]` for one. Stdin is not connected. */
  argv: Argv,
  timeoutMs: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_EXEC_TIMEOUT_MS }))),
  /** The bound of each of stdout and stderr; past it their head and tail are kept. */
  maxOutputBytes: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_EXEC_OUTPUT }))),
  /** Relative to the workspace folder (the default) and confined to it. */
  cwd: Schema.optionalKey(WorkspacePathParam),
  env: Schema.optionalKey(CommandEnv)
})
export type ExecRequest = typeof ExecRequest.Type

export const ExecResult = Schema.Struct({
  /** Null when the command was killed at its deadline. */
  exitCode: Schema.NullOr(Schema.Int),
  /** Each cut at `maxOutputBytes`, keeping head and tail with a marker line between. */
  stdout: Schema.String,
  stderr: Schema.String,
  truncated: Schema.Boolean,
  /** The deadline passed: its processes were killed inside the container. */
  timedOut: Schema.Boolean,
  durationMs: NonNegativeInt
})
export type ExecResult = typeof ExecResult.Type

export const Password = Schema.Struct({ id: SandboxId, password: Schema.String })
export type Password = typeof Password.Type

// --- previews ------------------------------------------------------------------

/** A port of a sandbox with its two preview URLs. */
export const PortView = PreviewPort.mapFields((fields) => ({
  ...fields,
  /** Host form, the app at `/`: `http://<port>.<id>.localhost:<previewPort>/` (another service's: `<port>.<service>.<id>...`). */
  url: Schema.String,
  /** Path form, for where `*.localhost` does not resolve (token or public port only): `http://localhost:<previewPort>/s/<id>/<port>/` (another service's: `/s/<id>/<service>:<port>/`). */
  pathUrl: Schema.String
}))
export type PortView = typeof PortView.Type

/** `prbox ports`: the loopback port previews are served on, and the sandbox's ports (declared, then discovered). */
export const PortList = Schema.Struct({
  previewPort: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 })),
  ports: Schema.Array(PortView)
})
export type PortList = typeof PortList.Type

/**
 * `prbox ports --public/--private [<service>:]<port>`: open a port without auth
 * until the sandbox stops, or close it again; with `service`, that Compose
 * service's port (the app's own when absent).
 */
export const PublicRequest = Schema.Struct({ public: Schema.Boolean, service: Schema.optionalKey(Schema.String) })
export type PublicRequest = typeof PublicRequest.Type

/** `prbox preview-token`: what scripts send as `Authorization: Bearer <token>`. */
export const PreviewToken = Schema.Struct({ token: Schema.String })
export type PreviewToken = typeof PreviewToken.Type

export const VersionInfo = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  /** The API generations this daemon serves (`/v<n>`). */
  api: Schema.Array(PositiveInt),
  pid: PositiveInt,
  home: Schema.String,
  startedAt: Timestamp
})
export type VersionInfo = typeof VersionInfo.Type

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  uptimeMs: NonNegativeInt,
  requests: NonNegativeInt,
  streams: NonNegativeInt
})
export type Health = typeof Health.Type

// --- maintenance ---------------------------------------------------------------

export const ReconcileChange = Schema.Struct({
  sandboxId: Schema.NullOr(Schema.String),
  containerId: Schema.NullOr(Schema.String),
  action: Schema.String
})
export const MaintenanceFailure = Schema.Struct({ sandboxId: Schema.String, detail: Schema.String })
export type MaintenanceFailure = typeof MaintenanceFailure.Type

export const ReconcileReport = Schema.Struct({
  passes: Schema.Array(
    Schema.Struct({
      pass: Schema.String,
      changes: Schema.Array(ReconcileChange),
      failures: Schema.Array(MaintenanceFailure)
    })
  )
})
export type ReconcileReport = typeof ReconcileReport.Type

export const GcPlan = Schema.Struct({ stop: Schema.Array(SandboxId), remove: Schema.Array(SandboxId) })
export type GcPlan = typeof GcPlan.Type

/**
 * Without `execute` the daemon only plans. With it, `shown` is the plan the
 * user confirmed: the daemon recomputes the plan and acts only on what was
 * shown and is still true.
 */
export const GcRequest = Schema.Struct({
  execute: Schema.Boolean,
  shown: Schema.optionalKey(GcPlan)
})
export type GcRequest = typeof GcRequest.Type

export const GcReport = Schema.Struct({
  plan: GcPlan,
  executed: Schema.Boolean,
  stopped: Schema.Array(SandboxId),
  removed: Schema.Array(SandboxId),
  failures: Schema.Array(MaintenanceFailure)
})
export type GcReport = typeof GcReport.Type

/**
 * Labelled containers of this PRBOX_HOME with no row, its sandboxes' volumes
 * whose sandbox has no row, and workspace/home directories no row references.
 */
export const PrunePlan = Schema.Struct({
  containers: Schema.Array(Schema.String),
  volumes: Schema.Array(Schema.String),
  directories: Schema.Array(Schema.String)
})
export type PrunePlan = typeof PrunePlan.Type

/** Like gc: without `execute` only the plan; with it, only what was `shown` and is still true is removed. */
export const PruneRequest = Schema.Struct({
  execute: Schema.Boolean,
  shown: Schema.optionalKey(PrunePlan)
})
export type PruneRequest = typeof PruneRequest.Type

/** `removed` is what was actually removed: after a partial failure, the plan less the `failures`. */
export const PruneReport = Schema.Struct({
  plan: PrunePlan,
  executed: Schema.Boolean,
  removed: PrunePlan,
  failures: Schema.Array(MaintenanceFailure)
})
export type PruneReport = typeof PruneReport.Type

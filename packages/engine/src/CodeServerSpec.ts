import type { Sandbox } from "@prbox/domain"
import { Redacted } from "effect"
import type { PrboxConfig } from "./Config.ts"
import type { ContainerSpec } from "./ContainerRuntime.ts"
import { LABELS } from "./Labels.ts"

/** Port code-server listens on inside the container. */
export const CODE_SERVER_PORT = 8080
export const CONTAINER_HOME = "/home/prbox"
export const CONTAINER_WORKSPACE = "/workspace"

/** The sandbox's URL on this machine, or "" before it has a port. */
export const sandboxUrl = (port: number | null): string => (port === null ? "" : `http://127.0.0.1:${port}/`)

/** The progress line of a sandbox whose kept port was taken while it was stopped. */
export const portMovedLine = (from: number, to: number): string =>
  `port ${from} was taken; the sandbox moved to ${sandboxUrl(to)}`

/** The row's detail once running; a move stays visible in `prbox status` until the next one. */
export const readyDetail = (hostPort: number, movedFrom: number | null): string =>
  `ready at ${sandboxUrl(hostPort)}${movedFrom === null ? "" : ` (port ${movedFrom} was taken)`}`

export interface SpecInput {
  readonly row: Sandbox
  readonly config: PrboxConfig
  /** `uid:gid` the sandbox runs as (the workspace's owner). */
  readonly user: string
  /** The sandbox user's home directory on the host. */
  readonly homePath: string
  /** `$PRBOX_HOME`: labelled on the container so reconcile finds its own. */
  readonly engineHome: string
  /** Extra labels on every container (tests and benches label their runs). */
  readonly extraLabels: Readonly<Record<string, string>>
  /** The sandbox's host port, kept for its life: its URL. */
  readonly hostPort: number
}

/**
 * The container of a sandbox: code-server on the workspace, password auth,
 * the user's image, env, mounts and limits, and prbox's labels (which win).
 */
export const codeServerSpec = ({
  row,
  config,
  user,
  homePath,
  engineHome,
  extraLabels,
  hostPort
}: SpecInput): ContainerSpec => ({
  name: `prbox-${row.id}`,
  image: config.image,
  args: [
    "--bind-addr",
    `0.0.0.0:${CODE_SERVER_PORT}`,
    "--auth",
    "password",
    "--disable-telemetry",
    "--disable-update-check",
    CONTAINER_WORKSPACE
  ],
  // The password reaches code-server only through its environment, never argv.
  env: {
    ...config.env,
    HOME: CONTAINER_HOME,
    XDG_CONFIG_HOME: `${CONTAINER_HOME}/.config`,
    XDG_DATA_HOME: `${CONTAINER_HOME}/.local/share`,
    XDG_CACHE_HOME: `${CONTAINER_HOME}/.cache`,
    PASSWORD: row.accessPassword === null ? "" : Redacted.value(row.accessPassword)
  },
  labels: {
    ...config.labels,
    ...extraLabels,
    [LABELS.sandbox]: row.id,
    [LABELS.pr]: String(row.pullRequest),
    [LABELS.repo]: `${row.host ?? ""}/${row.repository}`,
    [LABELS.home]: engineHome
  },
  binds: [
    { hostPath: row.workspacePath ?? "", containerPath: CONTAINER_WORKSPACE, readOnly: false },
    { hostPath: homePath, containerPath: CONTAINER_HOME, readOnly: false },
    ...config.mounts.map((mount) => ({
      hostPath: mount.source,
      containerPath: mount.target,
      readOnly: mount.readOnly
    }))
  ],
  user,
  workingDir: CONTAINER_WORKSPACE,
  port: CODE_SERVER_PORT,
  hostPort,
  ...(config.cpus === undefined ? {} : { cpus: config.cpus }),
  ...(config.memoryMb === undefined ? {} : { memoryBytes: config.memoryMb * 1024 * 1024 }),
  ...(config.pidsLimit === undefined ? {} : { pidsLimit: config.pidsLimit })
})

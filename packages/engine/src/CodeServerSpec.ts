import { capabilitiesToDrop, type EnvironmentPlan, POOL_LABEL, type Sandbox, sandboxVolumeName } from "@prbox/domain"
import { Redacted } from "effect"
import { besideImageCommand, codeServerArgv, entrypointsThen } from "./CodeServerLaunch.ts"
import type { PrboxConfig } from "./Config.ts"
import type { ContainerSpec } from "./ContainerSpec.ts"
import { LABELS } from "./ContainerSpec.ts"
import type { CodeServerDistribution } from "./SandboxTools.ts"

/** Port code-server listens on inside the container. */
export const CODE_SERVER_PORT = 8080
export const CONTAINER_HOME = "/home/prbox"
/** The workspace folder of a sandbox without a devcontainer.json. */
export const CONTAINER_WORKSPACE = "/workspace"
/** Port prbox's preview relay (node/PreviewRelay.cjs) listens on inside the container. */
export const PREVIEW_RELAY_PORT = 47919
/** Where prbox's code-server distribution is mounted (read-only) in a sandbox. */
export const CODE_SERVER_MOUNT = "/opt/prbox/code-server"
/** Where a sandbox sees its folder of SSH sockets (read-only): its SSH server dials the client (`prbox ssh-proxy`) there. */
export const SSH_SOCKETS_MOUNT = "/opt/prbox/ssh"

/** The sandbox's URL on this machine, or "" before it has a port. */
export const sandboxUrl = (port: number | null): string => (port === null ? "" : `http://127.0.0.1:${port}/`)

/** The progress line of a sandbox whose kept port was taken while it was stopped. */
export const portMovedLine = (from: number, to: number): string =>
  `port ${from} was taken; the sandbox moved to ${sandboxUrl(to)}`

/** The row's detail once running; a move stays visible in `prbox status` until the next one. */
export const readyDetail = (hostPort: number, movedFrom: number | null): string =>
  `ready at ${sandboxUrl(hostPort)}${movedFrom === null ? "" : ` (port ${movedFrom} was taken)`}`

/** The env code-server and the sandbox user's commands see for HOME and the XDG folders. */
export const homeEnv: Readonly<Record<string, string>> = {
  HOME: CONTAINER_HOME,
  XDG_CONFIG_HOME: `${CONTAINER_HOME}/.config`,
  XDG_DATA_HOME: `${CONTAINER_HOME}/.local/share`,
  XDG_CACHE_HOME: `${CONTAINER_HOME}/.cache`
}

/**
 * HOME and the XDG folders for a plan: prbox's carried home, unless the
 * remote user was mapped to the workspace owner's uid (`updateRemoteUserUID`),
 * whose HOME is its own in the image (Docker sets it from /etc/passwd, or the
 * image's ENV HOME); the XDG folders (code-server's settings, extensions and
 * caches) stay in the carried home, so they outlive a rebuild.
 */
export const homeEnvFor = (plan: EnvironmentPlan): Readonly<Record<string, string>> => {
  if (plan.remoteUserMapped !== true) return homeEnv
  const { HOME: _home, ...xdg } = homeEnv
  return xdg
}

/** What prbox sets that the user's probed environment must not change: its own variables and `remoteEnv`. */
export const keptVariables = (plan: EnvironmentPlan): ReadonlyArray<string> => [
  ...Object.keys(homeEnvFor(plan)),
  "USER",
  "PASSWORD",
  "HASHED_PASSWORD",
  "PRBOX_PREVIEW_URL_TEMPLATE",
  "VSCODE_PROXY_URI",
  ...Object.keys(plan.remoteEnv)
]

/** How to run code-server in the container: prbox's mounted distribution, or the image's own. */
export const codeServerCommand = (distribution: CodeServerDistribution | null): ReadonlyArray<string> =>
  distribution === null
    ? ["code-server"]
    : [`${CODE_SERVER_MOUNT}/${distribution.node}`, `${CODE_SERVER_MOUNT}/${distribution.entry}`]

/** Who the container and its commands run as: the workspace owner; root only for a trusted repository that asked. */
export const containerUser = (plan: EnvironmentPlan, owner: string): string =>
  plan.widening?.runAsRoot === true ? "0:0" : owner

/** The sandbox's own volumes, named after it: the n-th anonymous one by its place. */
export const sandboxVolumes = (name: string, plan: EnvironmentPlan) => {
  let anonymous = 0
  return (plan.container?.volumes ?? []).map((volume) => ({
    name: sandboxVolumeName(name, volume.source, volume.source === null ? anonymous++ : 0),
    containerPath: volume.target,
    readOnly: volume.readOnly
  }))
}

/** The user's own mounts: config.json's and the trusted widening's. */
export const userMounts = (config: PrboxConfig, plan: EnvironmentPlan) => [
  ...config.mounts,
  ...(plan.widening?.mounts ?? [])
]

/**
 * The container's command: prbox's code-server as its main process (with
 * Docker's init), or (`overrideCommand: false`) the image's ENTRYPOINT and
 * CMD as its main process with code-server started beside it, and Docker's
 * init only when the configuration asks (the image's command may want to be
 * PID 1). Features' entrypoints run first (CodeServerLaunch.ts). An image
 * that brings its own code-server runs its own entrypoint.
 */
const launchOf = (
  distribution: CodeServerDistribution | null,
  plan: EnvironmentPlan,
  args: ReadonlyArray<string>,
  probeTimeoutSeconds: number
): Pick<ContainerSpec, "entrypoint" | "args" | "init"> => {
  if (distribution === null) return { args }
  const [node = "", entry = ""] = codeServerCommand(distribution)
  const command = codeServerArgv([node, entry], plan, keptVariables(plan), probeTimeoutSeconds)
  const entrypoints = plan.entrypoints ?? []
  if (plan.imageCommand === undefined) {
    return entrypoints.length === 0
      ? { entrypoint: command, args }
      : { entrypoint: ["/bin/sh", "-c", entrypointsThen(entrypoints), "prbox"], args: [...command, ...args] }
  }
  return {
    entrypoint: ["/bin/sh", "-c", besideImageCommand([...command, ...args], entrypoints), "prbox"],
    args: plan.imageCommand,
    init: plan.init === true
  }
}

/**
 * What of a sandbox its container is made from. A pool container's has no
 * PR (`pullRequest` null): it carries `dev.prbox.pool` (its environment key)
 * instead of `dev.prbox.pr`, and the PR it comes to serve lives in the rows.
 */
export type SpecRow = Pick<Sandbox, "id" | "accessPassword" | "host" | "repository" | "workspacePath"> & {
  readonly pullRequest: Sandbox["pullRequest"] | null
  readonly pool?: string
}

export interface SpecInput {
  readonly row: SpecRow
  readonly config: PrboxConfig
  readonly plan: EnvironmentPlan
  /** prbox's code-server, mounted; null when the image runs its own (`codeServer: "included"`). */
  readonly distribution: CodeServerDistribution | null
  /** `uid:gid` the sandbox runs as (the workspace's owner). */
  readonly user: string
  /** The sandbox user's home directory on the host. */
  readonly homePath: string
  /** The sandbox's folder of SSH sockets on the host (made already); none for a sandbox of the old layout. */
  readonly sockets: string | undefined
  /** `$PRBOX_HOME`: labelled on the container so reconcile finds its own. */
  readonly engineHome: string
  /** The home's install id (Installation.ts): a home's path can repeat on a shared engine. */
  readonly install: string
  /** Extra labels on every container (tests and benches label their runs). */
  readonly extraLabels: Readonly<Record<string, string>>
  /** The sandbox's host port, kept for its life: its URL. */
  readonly hostPort: number
  /** `http://{{port}}.<id>.localhost:<previewPort>/`: tells apps (and code-server's Ports panel) their preview URL. */
  readonly previewUrlTemplate?: string
}

/**
 * The container of a sandbox: code-server on the workspace, password auth,
 * the environment's image, env and limits, the user's mounts, and prbox's
 * labels (which win). The workspace and the sandbox's home are its carried
 * folders; code-server is prbox's distribution, shared read-only and run as
 * the container's entrypoint, unless the image brings its own.
 */
export const codeServerSpec = ({
  row,
  config,
  plan,
  distribution,
  user,
  homePath,
  sockets,
  engineHome,
  install,
  extraLabels,
  hostPort,
  previewUrlTemplate
}: SpecInput): ContainerSpec => {
  const widening = plan.widening
  const options = plan.container
  const name = `prbox-${row.id}`
  const securityOpt = [...(options?.securityOpt ?? []), ...(widening?.securityOpt ?? [])]
  const volumes = sandboxVolumes(name, plan)
  const cpus = plan.cpus ?? config.cpus
  const memoryMb = plan.memoryMb ?? config.memoryMb
  const codeServerArgs = [
    "--bind-addr",
    `0.0.0.0:${CODE_SERVER_PORT}`,
    "--auth",
    "password",
    "--disable-telemetry",
    "--disable-update-check",
    plan.workspaceFolder
  ]
  return {
    name,
    image: plan.image,
    ...launchOf(distribution, plan, codeServerArgs, config.userEnvProbeTimeoutSeconds),
    // The password reaches code-server only through its environment, never argv:
    // prbox's own code-server takes its hash; an image's own, of any version, the password.
    env: {
      ...config.env,
      ...plan.containerEnv,
      ...plan.remoteEnv,
      ...homeEnvFor(plan),
      ...(plan.remoteUser === null ? {} : { USER: plan.remoteUser }),
      ...(previewUrlTemplate === undefined
        ? {}
        : { PRBOX_PREVIEW_URL_TEMPLATE: previewUrlTemplate, VSCODE_PROXY_URI: previewUrlTemplate }),
      ...(row.accessPassword === null
        ? { PASSWORD: "" }
        : distribution === null
          ? { PASSWORD: Redacted.value(row.accessPassword) }
          : distribution.passwordEnv(Redacted.value(row.accessPassword), row.id))
    },
    labels: {
      ...config.labels,
      ...extraLabels,
      [LABELS.sandbox]: row.id,
      ...(row.pullRequest === null ? {} : { [LABELS.pr]: String(row.pullRequest) }),
      ...(row.pool === undefined ? {} : { [POOL_LABEL]: row.pool }),
      [LABELS.repo]: `${row.host ?? ""}/${row.repository}`,
      [LABELS.home]: engineHome,
      [LABELS.install]: install
    },
    carried: [
      { kind: "workspace", hostPath: row.workspacePath ?? "", containerPath: plan.workspaceFolder },
      { kind: "home", hostPath: homePath, containerPath: CONTAINER_HOME }
    ],
    ...(distribution === null
      ? {}
      : { shared: { hostPath: distribution.root, containerPath: CODE_SERVER_MOUNT, key: distribution.key } }),
    ...(sockets === undefined ? {} : { sockets: { hostPath: sockets, containerPath: SSH_SOCKETS_MOUNT } }),
    binds: userMounts(config, plan).map((mount) => ({
      hostPath: mount.source,
      containerPath: mount.target,
      readOnly: mount.readOnly
    })),
    ...(volumes.length === 0 ? {} : { volumes }),
    user: containerUser(plan, user),
    ...(widening === undefined ? {} : { privileged: widening.privileged, capAdd: widening.capAdd }),
    ...(securityOpt.length === 0 ? {} : { securityOpt }),
    ...(options?.hostname === undefined ? {} : { hostname: options.hostname }),
    ...(options === undefined || options.extraHosts.length === 0 ? {} : { extraHosts: options.extraHosts }),
    ...(options?.shmSizeMb === undefined ? {} : { shmSizeBytes: options.shmSizeMb * 1024 * 1024 }),
    capDrop: capabilitiesToDrop(widening?.capAdd),
    workingDir: plan.workspaceFolder,
    port: CODE_SERVER_PORT,
    hostPort,
    relayPort: PREVIEW_RELAY_PORT,
    ...(cpus === undefined || cpus === null ? {} : { cpus }),
    ...(memoryMb === undefined || memoryMb === null ? {} : { memoryBytes: memoryMb * 1024 * 1024 }),
    ...(config.pidsLimit === undefined ? {} : { pidsLimit: config.pidsLimit })
  }
}

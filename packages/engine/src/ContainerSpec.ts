/**
 * What a sandbox's container is, whatever runs it: its spec (image, folders,
 * ports, limits), the labels every sandbox container carries, its state.
 */
import type { CarriedKind } from "@prbox/domain"
import { Context, Layer } from "effect"

/** Labels on every sandbox container, so state can be rebuilt from Docker alone. */
export const LABELS = {
  sandbox: "dev.prbox.sandbox",
  pr: "dev.prbox.pr",
  repo: "dev.prbox.repo",
  home: "dev.prbox.home",
  /** The install id of the `$PRBOX_HOME` that made it (Installation.ts): homes are paths, and paths repeat across machines. */
  install: "dev.prbox.install",
  /**
   * The sandbox's port on this machine's 127.0.0.1, on a container of an engine
   * whose ports are forwarded here over SSH (a remote engine): a daemon
   * started afresh forwards it again (HostPorts.ts).
   */
  port: "dev.prbox.port",
  /**
   * A Compose sandbox's other services (its database...): the service's
   * name. The sandbox's own container lacks it; the runtime starts, stops
   * and removes these with it.
   */
  service: "dev.prbox.service"
} as const

/** A folder of this machine the sandbox gets read-write, as its own (its workspace, its home). */
export interface CarriedFolder {
  readonly kind: CarriedKind
  readonly hostPath: string
  readonly containerPath: string
}

/** A folder of this machine every sandbox gets read-only, the same for all (prbox's code-server). */
export interface SharedFolder {
  readonly hostPath: string
  readonly containerPath: string
  /** Names its content (a version): equal keys, equal content. */
  readonly key: string
}

export interface ContainerSpec {
  /** `prbox-<sandbox id>` for a sandbox: the names of what the runtime makes for it derive from it. */
  readonly name: string
  readonly image: string
  /** Replaces the image's entrypoint (prbox's mounted code-server); the image's when absent. */
  readonly entrypoint?: ReadonlyArray<string>
  readonly args: ReadonlyArray<string>
  /** Values may be secrets (the access password): never log or echo them. */
  readonly env: Readonly<Record<string, string>>
  readonly labels: Readonly<Record<string, string>>
  /**
   * The sandbox's own folders. Where the runtime sees this machine's files
   * (`filesAt` "host") they are mounted; elsewhere they are copied in once,
   * when the sandbox's first container is made, and kept for its later ones.
   * Absent: a bare container with nothing carried.
   */
  readonly carried?: ReadonlyArray<CarriedFolder>
  readonly shared?: SharedFolder
  /**
   * The sandbox's folder of SSH sockets on this machine, read-only in the
   * container (its SSH server dials the client there): only where the runtime
   * sees this machine's files; elsewhere SSH goes through an exec alone.
   */
  readonly sockets?: { readonly hostPath: string; readonly containerPath: string }
  /** The user's own mounts (config.json, a trusted widening): only where the runtime sees this machine's files. */
  readonly binds: ReadonlyArray<{
    readonly hostPath: string
    readonly containerPath: string
    readonly readOnly: boolean
  }>
  /**
   * The sandbox's own volumes (the ones its configuration asks for): made
   * with its labels, filled from the image like Docker's, removed with it.
   */
  readonly volumes?: ReadonlyArray<{
    readonly name: string
    readonly containerPath: string
    readonly readOnly: boolean
  }>
  readonly user: string
  readonly workingDir: string
  readonly port: number
  /**
   * The host port (on 127.0.0.1) to publish `port` on, for the container's
   * life. Absent, the runtime picks one at every start (tests' bare containers).
   */
  readonly hostPort?: number
  /**
   * The container port prbox's preview relay listens on, published on
   * 127.0.0.1 at a port the runtime picks at every start (found again by
   * `connect`). Absent: the container has no previews.
   */
  readonly relayPort?: number
  readonly cpus?: number
  /** Its CPU weight against other containers' (Docker's default 1024); a prebuild's runs low. */
  readonly cpuShares?: number
  readonly memoryBytes?: number
  readonly pidsLimit?: number
  /** Only for a repository the user trusts (config.json's `trustedRepositories`). */
  readonly privileged?: boolean
  readonly capAdd?: ReadonlyArray<string>
  /** A trusted repository's, and narrowing ones (`no-new-privileges`) for any. */
  readonly securityOpt?: ReadonlyArray<string>
  readonly hostname?: string
  /** `name:address`, never the host's gateway (devcontainer RunArgs.ts). */
  readonly extraHosts?: ReadonlyArray<string>
  readonly shmSizeBytes?: number
  /** Capabilities of Docker's default set the container does without (domain `capabilitiesToDrop`). */
  readonly capDrop: ReadonlyArray<string>
  /** Docker's init as PID 1; absent: on (code-server, the main process, needs a reaper). */
  readonly init?: boolean
}

/** A folder of this machine mounted into the container. */
export interface HostMount {
  readonly hostPath: string
  readonly containerPath: string
  readonly readOnly: boolean
}

/**
 * Every folder of this machine `spec` mounts, where the runtime sees this
 * machine's files: its carried folders, the shared one, its folder of SSH
 * sockets (both read-only) and the user's own mounts.
 */
export const hostMounts = (spec: ContainerSpec): ReadonlyArray<HostMount> => [
  ...(spec.carried ?? []).map((folder) => ({
    hostPath: folder.hostPath,
    containerPath: folder.containerPath,
    readOnly: false
  })),
  ...(spec.shared === undefined
    ? []
    : [{ hostPath: spec.shared.hostPath, containerPath: spec.shared.containerPath, readOnly: true }]),
  ...(spec.sockets === undefined ? [] : [{ ...spec.sockets, readOnly: true }]),
  ...spec.binds
]

export type ContainerState =
  | { readonly _tag: "Running"; readonly hostPort: number | undefined }
  | { readonly _tag: "Stopped" }
  | { readonly _tag: "Absent" }

export interface LabelledContainer {
  readonly containerId: string
  readonly running: boolean
  readonly labels: Readonly<Record<string, string>>
}

/** Used for a root daemon's sandboxes: a sandbox never runs as root. */
const FALLBACK_UID = 1000

export interface SandboxUser {
  readonly uid: number
  readonly gid: number
}

/** `uid:gid`, as a container's user. */
export const userSpec = (user: SandboxUser): string => `${user.uid}:${user.gid}`

/** The user a sandbox runs as for a daemon (or a workspace creator) running as `owner`: never root. */
export const userFor = (owner: SandboxUser): SandboxUser =>
  owner.uid === 0 ? { uid: FALLBACK_UID, gid: FALLBACK_UID } : owner

/**
 * Who this daemon's sandboxes run as: its own user, or a fixed non-root
 * user for a root daemon. Never read from a workspace: root in a sandbox
 * can chown its own files, and would choose who the next start runs as.
 */
export const daemonSandboxUser = (): SandboxUser =>
  userFor({ uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 })

/** Labels on every container besides prbox's own (tests and benches label their runs with them). */
export class ExtraLabels extends Context.Service<ExtraLabels, Readonly<Record<string, string>>>()(
  "prbox/engine/ExtraLabels"
) {
  static readonly layer = (labels: Readonly<Record<string, string>>) => Layer.succeed(ExtraLabels, labels)
}

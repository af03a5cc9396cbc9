import type { Redacted } from "effect"

/** What the Docker service (Docker.ts) takes and gives: containers, their mounts, execs, volumes, imports. */

/**
 * A registry login for one pull, sent to the engine as `X-Registry-Auth`
 * (the engine keeps nothing of it). `serverAddress` is the registry's
 * `host[:port]`. The secret stays Redacted until the request is made.
 */
export type PullAuth =
  | {
      readonly serverAddress: string
      readonly username: string
      readonly password: Redacted.Redacted<string>
    }
  | { readonly serverAddress: string; readonly identityToken: Redacted.Redacted<string> }

export interface Bind {
  readonly hostPath: string
  readonly containerPath: string
  readonly readOnly: boolean
}

/** A named volume of the engine, mounted into a container. */
export interface VolumeMount {
  readonly volume: string
  readonly containerPath: string
  readonly readOnly: boolean
  /**
   * A new volume is filled from the image's files at its path, as Docker does
   * by default (a sandbox's own volume: what it holds, the container had). Absent:
   * never, for volumes prbox fills itself.
   */
  readonly seed?: boolean
}

export interface VolumeSummary {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
}

export interface ContainerSpec {
  readonly name: string
  readonly image: string
  /** Replaces the image's entrypoint (Docker's `Entrypoint`); the image's when absent. */
  readonly entrypoint?: ReadonlyArray<string>
  /** Arguments for the image's entrypoint; the image's CMD when absent. */
  readonly cmd?: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly labels: Readonly<Record<string, string>>
  /** Host paths must exist: a missing one fails the create instead of appearing as a root-owned directory. */
  readonly binds: ReadonlyArray<Bind>
  /** Named volumes (created first: see createVolume), seeded from the image's files only when they say so. */
  readonly volumes?: ReadonlyArray<VolumeMount>
  readonly user?: string
  readonly workingDir?: string
  /** The container's TCP port to publish, always on 127.0.0.1 only. */
  readonly exposedPort: number
  /**
   * Host port to publish on, fixed for the container's life. When absent
   * Docker picks a free one at every start, so it changes across restarts.
   */
  readonly hostPort?: number
  /**
   * More container ports to publish on 127.0.0.1, each at a host port Docker
   * picks at every start (see ContainerInfo.publishedPorts).
   */
  readonly extraPorts?: ReadonlyArray<number>
  readonly cpus?: number
  /** CPU weight (CpuShares; the engine's default 1024). */
  readonly cpuShares?: number
  readonly memoryBytes?: number
  readonly pidsLimit?: number
  /** Widening the engine allows only for a repository the user trusts. */
  readonly privileged?: boolean
  readonly capAdd?: ReadonlyArray<string>
  readonly securityOpt?: ReadonlyArray<string>
  /** Capabilities of Docker's default set the container does without. */
  readonly capDrop?: ReadonlyArray<string>
  /** Run Docker's init as PID 1 (reaps zombies, forwards signals). */
  readonly init?: boolean
  readonly hostname?: string
  /** `name:address` lines for the container's /etc/hosts. */
  readonly extraHosts?: ReadonlyArray<string>
  /** The size of /dev/shm. */
  readonly shmSizeBytes?: number
  /** "none": no network at all (nothing published); absent, Docker's default bridge. */
  readonly network?: "none"
}

export type ContainerStatus = "created" | "running" | "paused" | "restarting" | "removing" | "exited" | "dead"

export interface ContainerState {
  readonly status: ContainerStatus
  readonly running: boolean
  readonly exitCode: number
  /** Absent until the container first starts. */
  readonly startedAt: Date | undefined
  /** Absent until the container first exits. */
  readonly finishedAt: Date | undefined
}

export interface ContainerInfo {
  readonly id: string
  readonly name: string
  readonly image: string
  readonly state: ContainerState
  readonly labels: Readonly<Record<string, string>>
  /** The host port `exposedPort` is published on (127.0.0.1); absent while the container is not running. */
  readonly hostPort: number | undefined
  /** Container port → host port on 127.0.0.1, for every published port; empty while not running. */
  readonly publishedPorts: Readonly<Record<number, number>>
  /** The user the container runs as ("" for the image default). */
  readonly user: string
}

export interface ContainerSummary {
  readonly id: string
  readonly name: string
  readonly state: ContainerStatus
  readonly labels: Readonly<Record<string, string>>
  readonly image: string
}

export interface ExecOptions {
  readonly argv: ReadonlyArray<string>
  readonly user?: string
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
  readonly timeoutMs: number
  /** Cap on each of stdout and stderr; the rest is read and dropped. */
  readonly maxOutputBytes: number
}

export interface DetachedExecOptions {
  readonly argv: ReadonlyArray<string>
  readonly user?: string
  /** Values may be secrets: never echoed in an error. */
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
}

/** Where a command's stdin is written while it runs (`ExecInput`): bytes as they come, then its end. */
export interface ExecInputSink {
  readonly write: (chunk: Uint8Array) => void
  readonly end: () => void
}

/** Called once the command runs, with the sink its stdin is written to: the caller writes as its output asks. */
export type ExecInput = (sink: ExecInputSink) => void

export interface StreamedExecOptions extends DetachedExecOptions {
  /**
   * Written to the command's stdin, which is then closed; or an ExecInput
   * that writes it (and closes it) as it goes. Without it the command has no stdin.
   */
  readonly stdin?: Uint8Array | ExecInput
}

export interface ExecResult {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
  /** True when stdout or stderr was cut at `maxOutputBytes`. */
  readonly truncated: boolean
}

/** A container's filesystem as a new image: `repo:tag`, with its command and labels set over the container's config. */
export interface CommitRequest {
  readonly repo: string
  readonly tag: string
  readonly entrypoint: ReadonlyArray<string>
  readonly cmd: ReadonlyArray<string>
  readonly labels: Readonly<Record<string, string>>
}

export interface ImageSummary {
  readonly id: string
  readonly tags: ReadonlyArray<string>
  readonly labels: Readonly<Record<string, string>>
}

export interface ImportRequest {
  /** A root filesystem as a tar archive on this host. */
  readonly archivePath: string
  /** `repository:tag` for the new image. */
  readonly tag: string
  /** Dockerfile instructions applied to the image (ENV, WORKDIR, CMD, LABEL, USER...). */
  readonly changes: ReadonlyArray<string>
}

import type { Readable } from "node:stream"
import type { FilesAt, ImageBuildRequest, ImageInfo } from "@prbox/domain"
import { Context, type Effect, type Scope } from "effect"
import type { ContainerSpec, ContainerState, LabelledContainer } from "./ContainerSpec.ts"
import type {
  ContainerExited,
  CwdRefused,
  ImageBuildFailed,
  PortClosed,
  PortTaken,
  PreviewUnavailable,
  RuntimeError
} from "./Errors.ts"
import type { RegistryLogin } from "./RegistryAuth.ts"
import type { CommandInput, CommandPipe, PortStream, RelayAccess, RunningCommand } from "./RuntimeStreams.ts"

export type { CommandInput, CommandPipe, PortStream, RelayAccess, RunningCommand } from "./RuntimeStreams.ts"

/**
 * The narrow interface the lifecycle rules need from wherever sandboxes run.
 * Docker on the local engine is the first implementation (NodeContainerRuntime.ts);
 * a remote engine or a Kubernetes pod per sandbox fits the same shape.
 */
export interface ExecOutcome {
  /** Null when the command was killed at its deadline. */
  readonly exitCode: number | null
  /** Each cut to the limit keeping its head and its tail, with a marker line where bytes were left out. */
  readonly stdout: string
  readonly stderr: string
  readonly truncated: boolean
  readonly timedOut: boolean
  readonly durationMs: number
}

/** Who runs a command in the container, where, and for how long. */
export interface CommandOptions {
  readonly user: string
  /** Absolute in the container. */
  readonly cwd: string
  /**
   * A folder `cwd` must resolve inside, symbolic links resolved in the
   * container; when it does not (or is no folder) the command never starts
   * (CwdRefused). Without it `cwd` is used as named.
   */
  readonly within?: string
  /** Over the container's own environment, for this command only; values may be secrets. */
  readonly env?: Readonly<Record<string, string>>
  /** Past it the command's process group is killed inside the container. */
  readonly timeoutMs: number
}

export interface RuntimeExecOptions extends CommandOptions {
  /** Cap on each of stdout and stderr, kept as head and tail (domain `makeOutputBound`). */
  readonly maxOutputBytes: number
  /** Written and closed; or called once the command runs, to write (and close) it as its output asks. */
  readonly stdin?: Uint8Array | ((input: CommandInput) => void)
  /** Each chunk of output as it comes, besides what the outcome keeps. */
  readonly onOutput?: (stream: "stdout" | "stderr", chunk: Uint8Array) => void
}

/** CwdRefused only ever comes with `within`. */
export type ExecError<O extends CommandOptions> = O extends { readonly within: string }
  ? RuntimeError | CwdRefused
  : RuntimeError

export interface ContainerRuntimeShape {
  /**
   * Makes the image available; a failed pull of a present image continues
   * with it and says so. `login` (RegistryAuth's, for the image's registry)
   * is used for this pull only; absent, the registry is asked anonymously.
   */
  readonly ensureImage: (
    image: string,
    onProgress: (line: string) => Effect.Effect<void>,
    login?: RegistryLogin
  ) => Effect.Effect<void, RuntimeError>
  /** Imports a root filesystem tar as an image (`docker import`), with Dockerfile `changes` (ENV, WORKDIR, CMD, LABEL...). */
  readonly importImage: (
    request: { readonly archivePath: string; readonly tag: string; readonly changes: ReadonlyArray<string> },
    onProgress: (line: string) => Effect.Effect<void>
  ) => Effect.Effect<void, RuntimeError>
  /** Facts about a local image, undefined when it is not present. */
  readonly imageInfo: (image: string) => Effect.Effect<ImageInfo | undefined, RuntimeError>
  /**
   * Builds a Dockerfile through the Docker API (the context sent as a tar stream), tagged
   * `<repository>:<hash of its inputs>` so an unchanged build is reused without building
   * (`reused: true`). Build output is streamed as progress lines. A failing step fails with
   * ImageBuildFailed naming the step ("Step 3/5 : RUN npm ci") and the engine's message.
   */
  readonly buildImage: (
    request: ImageBuildRequest,
    onProgress: (line: string) => Effect.Effect<void>
  ) => Effect.Effect<{ readonly tag: string; readonly reused: boolean }, RuntimeError | ImageBuildFailed>
  /**
   * The container's filesystem as a new image `tag` (`repository:tag`) that
   * runs as `base` does (its entrypoint and command; the user, env and
   * working folder are the container's, made from `base` with none of its
   * own); `labels` over the container's. Its id.
   */
  readonly commit: (
    containerId: string,
    request: { readonly tag: string; readonly base: string; readonly labels: Readonly<Record<string, string>> }
  ) => Effect.Effect<string, RuntimeError>
  /** Removes an image `commit` made; "in-use" (it stays) while a container, running or not, is made from it. */
  readonly removeImage: (tag: string) => Effect.Effect<"removed" | "absent" | "in-use", RuntimeError>
  /** Images with all of `labels`; fails (never an empty list) when they cannot be listed. */
  readonly listImagesByLabel: (
    labels: Readonly<Record<string, string>>
  ) => Effect.Effect<
    ReadonlyArray<{ readonly tags: ReadonlyArray<string>; readonly labels: Readonly<Record<string, string>> }>,
    RuntimeError
  >
  /** A port on this machine's 127.0.0.1 that nothing listens on now, not in `reserved` (stopped sandboxes' ports). */
  readonly freePort: (reserved: ReadonlySet<number>) => Effect.Effect<number, RuntimeError>
  /**
   * Where a sandbox's files are the truth: "host" when the runtime sees this
   * machine's (they are mounted: the host's workspace is the container's),
   * "engine" when they are carried into the runtime's own storage (the copy
   * in the container is the truth; git and files are worked on there).
   * Decided once; fails when it cannot be told, never guesses.
   */
  readonly filesAt: Effect.Effect<FilesAt, RuntimeError>
  /**
   * Creates the container (never started), with its carried and shared
   * folders in place: copying them reports progress lines (the total first).
   * User mounts where the runtime cannot see this machine's files fail it
   * before anything is made.
   */
  readonly provision: (
    spec: ContainerSpec,
    onProgress?: (line: string) => Effect.Effect<void>
  ) => Effect.Effect<string, RuntimeError>
  /**
   * Starts (an already running container is fine) and returns the port on
   * this machine's 127.0.0.1 its code-server is reached at (the spec's
   * `hostPort` when it had one); PortTaken when something else holds it. A
   * runtime that reaches the container through a tunnel opens it here and
   * keeps it until `stop` or `destroy`.
   */
  readonly start: (containerId: string) => Effect.Effect<number, RuntimeError | PortTaken | ContainerExited>
  /**
   * Makes a container that runs reachable again at the port `start` returned,
   * after this runtime was made afresh (a daemon restart): reconcile calls it
   * for each running sandbox whose container runs. Idempotent; a no-op where
   * the engine publishes on this machine's 127.0.0.1 itself, and for a
   * container that does not run. PortTaken when something else holds the port.
   */
  readonly attach: (containerId: string) => Effect.Effect<void, RuntimeError | PortTaken>
  readonly state: (containerId: string) => Effect.Effect<ContainerState, RuntimeError>
  /** Resolves only when the container is confirmed stopped or absent. */
  readonly stop: (containerId: string) => Effect.Effect<"stopped" | "absent", RuntimeError>
  /**
   * Resolves only when the container, and the sandbox's carried files with
   * it, are confirmed removed or absent. `keepFiles`: the carried files stay
   * for the sandbox's next container (a rebuild, a port move).
   */
  readonly destroy: (
    containerId: string,
    options?: { readonly keepFiles?: boolean }
  ) => Effect.Effect<"removed" | "absent", RuntimeError>
  /**
   * Runs `argv` bounded in time and output, with `stdin` or none. Docker
   * cannot kill an exec: the command runs under a small supervisor whose
   * process group is killed inside the container at the deadline or when
   * the caller is interrupted.
   */
  readonly exec: <O extends RuntimeExecOptions>(
    containerId: string,
    argv: ReadonlyArray<string>,
    options: O
  ) => Effect.Effect<ExecOutcome, ExecError<O>>
  /**
   * Starts `argv` without stdin and returns once it runs; stdout and stderr
   * reach `onOutput` in the order they come. The caller awaits `exit` or
   * calls `kill`; the deadline kills it as `exec`'s does.
   */
  readonly spawn: (
    containerId: string,
    argv: ReadonlyArray<string>,
    options: CommandOptions,
    onOutput: (chunk: Uint8Array) => void
  ) => Effect.Effect<RunningCommand, RuntimeError | CwdRefused>
  /**
   * Where files are at "host", what only root may do to a sandbox's folder
   * `parent/name` of this machine, done by the engine without running a
   * program: `sealFolder` makes it root's and 0700 (its content kept);
   * `clearFolder` deletes its tree (links not followed), leaving an empty
   * file of that name for `parent`'s owner to remove. `labels` go on the
   * throwaway container it takes.
   */
  readonly sealFolder: (
    parent: string,
    name: string,
    labels: Readonly<Record<string, string>>
  ) => Effect.Effect<void, RuntimeError>
  readonly clearFolder: (
    parent: string,
    name: string,
    labels: Readonly<Record<string, string>>
  ) => Effect.Effect<void, RuntimeError>
  /**
   * `path` (relative, `.` for all) of this machine's folder `folder` as the
   * engine reads it, a tar stream (links as links), undefined when missing:
   * links on the way resolve inside a container that sees only that folder,
   * never on this machine. Closed with the scope.
   */
  readonly readFolder: (
    folder: string,
    path: string,
    labels: Readonly<Record<string, string>>
  ) => Effect.Effect<Readable | undefined, RuntimeError, Scope.Scope>
  /**
   * Where files are at "host": this machine's folder `parent/name` filled
   * with what the runtime's stored files `volume` hold (a prebuild's
   * workspace), moved as data by the engine: nothing in it is read,
   * resolved or run on this machine. `labels` go on the throwaway
   * containers it takes.
   */
  readonly fillFolder: (
    volume: string,
    parent: string,
    name: string,
    labels: Readonly<Record<string, string>>
  ) => Effect.Effect<void, RuntimeError>
  /**
   * Where files are at "host": this machine's folders filled with what the
   * runtime's stored files hold, each `volume` into its `folder`, by a
   * started container of `image` (a sandbox's own, whose container may run
   * on the same folders meanwhile): the copy is made inside that container,
   * nothing in it is resolved on this machine. `labels` go on the container.
   */
  readonly copyIntoFolders: (
    image: string,
    fills: ReadonlyArray<{ readonly volume: string; readonly folder: string }>,
    labels: Readonly<Record<string, string>>
  ) => Effect.Effect<void, RuntimeError>
  /** Whether `path` exists in the container's filesystem (works on a created, never started container). */
  readonly hasPath: (containerId: string, path: string) => Effect.Effect<boolean, RuntimeError>
  /**
   * Follows the container's output written since `since` until a line
   * `matches` (true), or until it ends because the container stopped (false).
   */
  readonly awaitOutputLine: (
    containerId: string,
    since: Date,
    matches: (line: string) => boolean
  ) => Effect.Effect<boolean, RuntimeError>
  /**
   * Starts `argv` with its stdin and stdout as a byte stream the caller
   * drives (the SSH server's transport); stderr goes to `onStderr`. Closing
   * the scope ends the connection: the command must end when its stdin does.
   */
  readonly pipe: (
    containerId: string,
    argv: ReadonlyArray<string>,
    options: { readonly user: string; readonly cwd: string; readonly env?: Readonly<Record<string, string>> },
    onStderr: (chunk: Uint8Array) => void
  ) => Effect.Effect<CommandPipe, RuntimeError, Scope.Scope>
  /**
   * A byte stream to `port` (127.0.0.1, then ::1) inside the container, through
   * the relay; the caller owns (and destroys) it. With `service` (one of
   * `relay.services`, checked by the caller), to that Compose service's
   * `port`, dialled by the relay by name. PortClosed when nothing listens
   * there; PreviewUnavailable when the container has no relay port or the
   * relay cannot start.
   */
  readonly connect: (
    containerId: string,
    port: number,
    relay: RelayAccess,
    service?: string
  ) => Effect.Effect<PortStream, RuntimeError | PortClosed | PreviewUnavailable>
  /** The TCP ports listening inside the container now (its /proc/net/tcp and tcp6), through the relay. */
  readonly listeningPorts: (
    containerId: string,
    relay: RelayAccess
  ) => Effect.Effect<ReadonlyArray<number>, RuntimeError | PreviewUnavailable>
  /**
   * The names of this runtime's stored sandbox files (carried volumes) with
   * `labels`, each with its labels; fails (never an empty list) when they
   * cannot be listed.
   */
  readonly listFilesByLabel: (
    labels: Readonly<Record<string, string>>
  ) => Effect.Effect<
    ReadonlyArray<{ readonly name: string; readonly labels: Readonly<Record<string, string>> }>,
    RuntimeError
  >
  /** Removes stored sandbox files by name (one already gone is fine). */
  readonly removeFiles: (name: string) => Effect.Effect<void, RuntimeError>
  /** Fails (never returns an empty list) when the runtime cannot be enumerated. */
  readonly listByLabel: (
    labels: Readonly<Record<string, string>>
  ) => Effect.Effect<ReadonlyArray<LabelledContainer>, RuntimeError>
}

export class ContainerRuntime extends Context.Service<ContainerRuntime, ContainerRuntimeShape>()(
  "prbox/engine/ContainerRuntime"
) {}

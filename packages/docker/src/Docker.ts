import type { Duplex, Readable, Writable } from "node:stream"
import type { ImageBuildRequest, ImageInfo } from "@prbox/domain"
import { Context, type Effect, type Scope } from "effect"
import type {
  BindSourceMissing,
  ConnectionRefused,
  ContainerAlreadyStarted,
  ContainerAlreadyStopped,
  ContainerNotFound,
  DockerEngineError,
  EngineAuthFailed,
  EngineHostUntrusted,
  EngineUnavailable,
  EnumerationError,
  ExecTimeout,
  ImageBuildFailed,
  ImageInUse,
  ImageNotFound,
  ImagePullFailed,
  NameConflict,
  PortInUse
} from "./DockerError.ts"
import type {
  CommitRequest,
  ContainerInfo,
  ContainerSpec,
  ContainerSummary,
  DetachedExecOptions,
  ExecOptions,
  ExecResult,
  ImageSummary,
  ImportRequest,
  PullAuth,
  StreamedExecOptions,
  VolumeSummary
} from "./DockerTypes.ts"

/** Label filter: a value matches `key=value`, `undefined` matches any container that has the key. */
export type LabelFilter = Readonly<Record<string, string | undefined>>

/** The engine could not be asked (over SSH: also a refused host key or login), or answered with an error. */
/** A command whose stdin and stdout are a byte stream the caller drives. */
export interface ExecPipe {
  /** The command's stdin: ending it closes the command's stdin. */
  readonly input: Writable
  /** The command's stdout; ends when the command's output ends. */
  readonly output: Readable
  /** Its exit code, once its output ended. */
  readonly exitCode: Effect.Effect<number, Unreachable>
}

export type Unreachable = EngineUnavailable | EngineAuthFailed | EngineHostUntrusted | DockerEngineError

/**
 * The engine host's 127.0.0.1, where containers publish their ports, as this
 * machine reaches it. `local`: it is this machine's own (a local engine).
 * `ssh`: reached over the SSH connection the engine is asked through, which
 * `forward` also carries this machine's 127.0.0.1:<localPort> to.
 */
export type Loopback =
  | {
      readonly kind: "local"
      /** A TCP connection to 127.0.0.1:`port`; the caller owns (destroys) it. */
      readonly dial: (port: number) => Effect.Effect<Duplex, ConnectionRefused | Unreachable>
    }
  | {
      readonly kind: "ssh"
      /** A connection to the engine host's 127.0.0.1:`port`, a channel of the SSH connection; the caller owns it. */
      readonly dial: (port: number) => Effect.Effect<Duplex, ConnectionRefused | Unreachable>
      /**
       * Listens on this machine's 127.0.0.1:`localPort` (a free port when
       * absent) until the scope closes, carrying each connection to the
       * engine host's 127.0.0.1:`remotePort`; a dropped SSH connection is
       * made again for the next one. PortInUse when `localPort` is taken.
       */
      readonly forward: (request: {
        readonly localPort?: number | undefined
        readonly remotePort: number
      }) => Effect.Effect<{ readonly localPort: number }, PortInUse | Unreachable, Scope.Scope>
    }

export interface DockerShape {
  readonly loopback: Loopback
  readonly ping: () => Effect.Effect<void, Unreachable>
  readonly version: () => Effect.Effect<{ readonly version: string; readonly apiVersion: string }, Unreachable>
  readonly imageExists: (ref: string) => Effect.Effect<boolean, Unreachable>
  /** The image's facts; undefined when it is not present. */
  readonly imageInfo: (ref: string) => Effect.Effect<ImageInfo | undefined, Unreachable>
  /** Imports a root filesystem archive as an image (`docker import`), reporting progress entries as lines. */
  readonly importImage: (request: ImportRequest, onProgress: (line: string) => void) => Effect.Effect<void, Unreachable>
  /**
   * Pulls `ref`, reporting each progress entry as one line; `auth` is the
   * registry login for this pull only (absent: anonymous). No error or line
   * carries its secret.
   */
  readonly pullImage: (
    ref: string,
    onProgress: (line: string) => void,
    auth?: PullAuth
  ) => Effect.Effect<void, ImagePullFailed | EngineUnavailable | EngineAuthFailed | EngineHostUntrusted>
  /**
   * Builds an image from a Dockerfile, tagged by the hash of its inputs (every
   * file of the context, the Dockerfile, args, target and labels); a present tag is
   * reused without building. Build output is reported line by line.
   */
  readonly buildImage: (
    request: ImageBuildRequest,
    onProgress: (line: string) => void
  ) => Effect.Effect<{ readonly tag: string; readonly reused: boolean }, ImageBuildFailed | Unreachable>
  /**
   * The image as the tar archive `docker save` writes, streamed from the
   * engine as it reads it (never held whole); destroyed when the scope closes.
   * A repository without a tag names every tag it has: name the tag.
   */
  readonly saveImage: (ref: string) => Effect.Effect<Readable, ImageNotFound | Unreachable, Scope.Scope>
  /**
   * Loads a `docker save` archive streamed from `archive` (`docker load`),
   * reporting the engine's lines ("Loaded image: …"). An archive that fails to
   * read fails the load.
   */
  readonly loadImage: (archive: Readable, onProgress: (line: string) => void) => Effect.Effect<void, Unreachable>
  /**
   * A new image `repo:tag` of the container's filesystem (`docker commit`,
   * the container paused meanwhile), its id. Its config is the container's
   * with `entrypoint`, `cmd` and `labels` over it (a label can be emptied,
   * never dropped: the engine keeps the container's others).
   */
  readonly commitContainer: (
    id: string,
    request: CommitRequest
  ) => Effect.Effect<string, ContainerNotFound | Unreachable>
  /** Removes an image by reference, never forced: ImageInUse while a container (running or not) is made from it. */
  readonly removeImage: (ref: string) => Effect.Effect<"removed" | "absent", ImageInUse | Unreachable>
  /** Images with all of `labels`, each with its tags; fails rather than answering with a partial or empty list. */
  readonly listImagesByLabel: (labels: LabelFilter) => Effect.Effect<ReadonlyArray<ImageSummary>, EnumerationError>
  /** BindSourceMissing: a bind's host folder does not exist where the engine runs. */
  readonly createContainer: (
    spec: ContainerSpec
  ) => Effect.Effect<{ readonly id: string }, NameConflict | ImageNotFound | BindSourceMissing | Unreachable>
  /** Fails with PortInUse when the host port the container was created with is taken. */
  readonly start: (
    id: string
  ) => Effect.Effect<void, ContainerNotFound | ContainerAlreadyStarted | PortInUse | Unreachable>
  /** Sends SIGTERM, then SIGKILL after `timeoutSeconds`. */
  readonly stop: (
    id: string,
    options: { readonly timeoutSeconds: number }
  ) => Effect.Effect<void, ContainerNotFound | ContainerAlreadyStopped | Unreachable>
  readonly inspect: (id: string) => Effect.Effect<ContainerInfo, ContainerNotFound | Unreachable>
  readonly remove: (
    id: string,
    options: { readonly force: boolean; readonly volumes: boolean }
  ) => Effect.Effect<void, ContainerNotFound | Unreachable>
  /** Fails rather than answering with a partial or empty list when the engine cannot be asked. */
  readonly listByLabel: (
    labels: LabelFilter,
    options: { readonly all: boolean }
  ) => Effect.Effect<ReadonlyArray<ContainerSummary>, EnumerationError>
  readonly exec: (
    id: string,
    options: ExecOptions
  ) => Effect.Effect<ExecResult, ContainerNotFound | ExecTimeout | Unreachable>
  /**
   * Runs `argv`, handing each chunk of its stdout and stderr to `onOutput` as
   * it comes, and returns its exit code once its output ended. Unbounded in
   * time: interrupting it closes the stream but the process goes on (Docker
   * cannot kill an exec; the caller kills it inside the container).
   */
  readonly execStreamed: (
    id: string,
    options: StreamedExecOptions,
    onOutput: (stream: "stdout" | "stderr", chunk: Uint8Array) => void
  ) => Effect.Effect<{ readonly exitCode: number }, ContainerNotFound | Unreachable>
  /**
   * Starts `argv` with stdin attached (`docker exec -i`) and returns its
   * streams at once; stderr goes to `onStderr`. Closing the scope destroys the
   * connection: the command must end when its stdin does (Docker cannot kill it).
   */
  readonly execPipe: (
    id: string,
    options: DetachedExecOptions,
    onStderr: (chunk: Uint8Array) => void
  ) => Effect.Effect<ExecPipe, ContainerNotFound | Unreachable, Scope.Scope>
  /** Starts `argv` in the container and returns at once: nothing waits for it or reads its output. */
  readonly execDetached: (
    id: string,
    options: DetachedExecOptions
  ) => Effect.Effect<void, ContainerNotFound | Unreachable>
  /**
   * Whether `path` exists in the container's filesystem; works on a container
   * that was created and never started.
   */
  readonly hasPath: (id: string, path: string) => Effect.Effect<boolean, ContainerNotFound | Unreachable>
  /**
   * Follows the container's output (stdout and stderr, line by line) written
   * since `since` until `matches` accepts a line (true), or until the output
   * ends because the container stopped (false).
   */
  readonly awaitLogLine: (
    id: string,
    options: { readonly since: Date; readonly matches: (line: string) => boolean }
  ) => Effect.Effect<boolean, ContainerNotFound | Unreachable>
  /**
   * Extracts a tar stream into the container's filesystem at `path` (a folder
   * that exists there), through its mounts; works on a container that was
   * created and never started. Owners, modes and links are kept as archived.
   */
  readonly putArchive: (
    id: string,
    path: string,
    archive: Readable
  ) => Effect.Effect<void, ContainerNotFound | Unreachable>
  /**
   * A tar stream of `path` in the container's filesystem (through its
   * mounts; a created, never-started container's too): a folder with all it
   * holds, links as links. Undefined when the path is missing there. The
   * stream is closed with the scope.
   */
  readonly getArchive: (id: string, path: string) => Effect.Effect<Readable | undefined, Unreachable, Scope.Scope>
  /** Creates a named volume; one of that name already there is kept as it is. */
  readonly createVolume: (name: string, labels: Readonly<Record<string, string>>) => Effect.Effect<void, Unreachable>
  /** Removes a volume; fails while a container still uses it. */
  readonly removeVolume: (name: string) => Effect.Effect<"removed" | "absent", Unreachable>
  /** Fails rather than answering with a partial or empty list when the engine cannot be asked. */
  readonly listVolumesByLabel: (labels: LabelFilter) => Effect.Effect<ReadonlyArray<VolumeSummary>, EnumerationError>
  /** Networks with all of `labels` (a Compose sandbox's); fails rather than answering with a partial or empty list. */
  readonly listNetworksByLabel: (labels: LabelFilter) => Effect.Effect<ReadonlyArray<VolumeSummary>, EnumerationError>
  /** Removes a network by name; one already gone is "absent"; fails while a container is attached to it. */
  readonly removeNetwork: (name: string) => Effect.Effect<"removed" | "absent", Unreachable>
  /** Stdout and stderr of the container, interleaved as written. */
  readonly logs: (
    id: string,
    options: { readonly tail?: number; readonly since?: Date }
  ) => Effect.Effect<string, ContainerNotFound | Unreachable>
}

/** The container engine, in our own terms; see NodeDocker for the dockerode implementation. */
export class Docker extends Context.Service<Docker, DockerShape>()("prbox/docker/Docker") {}

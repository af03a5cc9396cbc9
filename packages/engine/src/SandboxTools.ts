import { Context, type Effect, Schema } from "effect"
import type { RuntimeError, SetupFailed } from "./Errors.ts"

/** Where the code-server prbox mounts into every sandbox is on the host, and how to run it. */
export interface CodeServerDistribution {
  /** Host folder, mounted read-only into the container. */
  readonly root: string
  /** The Node binary, relative to `root`. */
  readonly node: string
  /** code-server's entry script, relative to `root`. */
  readonly entry: string
  readonly version: string
  /** Names this build (version, Node and architecture): an engine keeps one copy per key. */
  readonly key: string
  /** The glibc dynamic loader its Node needs in the image (by the host's architecture). */
  readonly loader: string
  /** The container variables that give this code-server a sandbox's password (node/tools/CodeServerPassword.ts). */
  readonly passwordEnv: (password: string, sandboxId: string) => Readonly<Record<string, string>>
}

/** The engine's host: what a sandbox's limits are capped by (a PR may ask for more than there is). */
export interface HostResources {
  readonly cpus: number
  readonly memoryMb: number
}

type Progress = (line: string) => Effect.Effect<void>

/**
 * What prbox brings to every sandbox from the host: the code-server
 * distribution it mounts and the default image it builds when a repository
 * names none. The Node implementation builds both from the package
 * registries (node/NodeSandboxTools.ts).
 */
export interface SandboxToolsShape {
  /** The image a sandbox gets with no devcontainer.json and no configured image. */
  readonly defaultImage: string
  /** Makes the default image present: the local one, a pull, or a build (which needs root). */
  readonly ensureDefaultImage: (onProgress: Progress) => Effect.Effect<void, SetupFailed | RuntimeError>
  /** The code-server distribution, built once per version. */
  readonly codeServer: (onProgress: Progress) => Effect.Effect<CodeServerDistribution, SetupFailed>
  readonly resources: Effect.Effect<HostResources>
}

export class SandboxTools extends Context.Service<SandboxTools, SandboxToolsShape>()("prbox/engine/SandboxTools") {}

/** The host's code-server distribution could not be built; the detail says what to install or what failed. */
export class CodeServerUnavailable extends Schema.TaggedError<CodeServerUnavailable>()("CodeServerUnavailable", {
  detail: Schema.String
}) {
  override get message(): string {
    return `code-server is not available: ${this.detail}`
  }
}

/** prbox cannot build its default image here (not root, no apt, debootstrap failed); the detail says what to do. */
export class DefaultImageUnavailable extends Schema.TaggedError<DefaultImageUnavailable>()("DefaultImageUnavailable", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

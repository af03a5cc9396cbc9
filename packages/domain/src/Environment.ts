import { Schema } from "effect"
import { ReachableService } from "./ServicePreview.ts"
import { ENVIRONMENT_KINDS } from "./Vocabulary.ts"

/** Which source a sandbox's environment came from. */
export const EnvironmentKind = Schema.Literals(ENVIRONMENT_KINDS)
export type EnvironmentKind = typeof EnvironmentKind.Type

/**
 * A setting of the PR's configuration that was left out: the property as
 * written (`privileged`, `runArgs[2]`, `mounts[0]`), what it would have done
 * and what would honour it. Never a value from the file.
 */
export const IgnoredSetting = Schema.Struct({ property: Schema.String, detail: Schema.String })
export type IgnoredSetting = typeof IgnoredSetting.Type

/**
 * What environment a sandbox got, shown by `status`, `ls` and the extension:
 * the devcontainer.json it came from (relative to the repository's root), the
 * image it runs and that image's digest (its id when it was built here).
 */
export const SandboxEnvironment = Schema.Struct({
  kind: EnvironmentKind,
  path: Schema.optionalKey(Schema.String),
  image: Schema.String,
  imageDigest: Schema.NullOr(Schema.String),
  /** The devcontainer features installed on the image, each with the digest it was fetched as (null: a local folder). */
  features: Schema.optionalKey(
    Schema.Array(Schema.Struct({ key: Schema.String, digest: Schema.NullOr(Schema.String) }))
  ),
  /** The configuration's widening that was left out, and why (absent on rows older than it, and for images). */
  ignored: Schema.optionalKey(Schema.Array(IgnoredSetting))
})
export type SandboxEnvironment = typeof SandboxEnvironment.Type

/** A lifecycle command's single forms: a string runs through `/bin/sh -c`, an array is executed directly. */
export const SingleCommand = Schema.Union([
  Schema.TaggedStruct("Shell", { command: Schema.String }),
  Schema.TaggedStruct("Exec", { argv: Schema.Array(Schema.String).check(Schema.isMinLength(1)) })
])
export type SingleCommand = typeof SingleCommand.Type

/** The object form: named entries run in parallel, and all must succeed. */
export const LifecycleCommand = Schema.Union([
  ...SingleCommand.members,
  Schema.TaggedStruct("Parallel", {
    entries: Schema.Array(Schema.Struct({ name: Schema.String, command: SingleCommand }))
  })
])
export type LifecycleCommand = typeof LifecycleCommand.Type

/** The devcontainer lifecycle hooks prbox runs (never `initializeCommand`: it would run on the host). */
export const LifecycleHook = Schema.Literals([
  "onCreateCommand",
  "updateContentCommand",
  "postCreateCommand",
  "postStartCommand"
])
export type LifecycleHook = typeof LifecycleHook.Type

/** One command of a hook, with where it was declared (the image's metadata label runs first). */
export const LifecycleStep = Schema.Struct({
  hook: LifecycleHook,
  command: LifecycleCommand,
  /** "devcontainer.json" path, "image metadata", or "config.json" (the user's setupCommands). */
  origin: Schema.String
})
export type LifecycleStep = typeof LifecycleStep.Type

/**
 * What a repository the user trusts (config.json's `trustedRepositories`)
 * may widen its container by; PR content alone never gets any of it.
 */
export const ContainerWidening = Schema.Struct({
  runAsRoot: Schema.Boolean,
  privileged: Schema.Boolean,
  capAdd: Schema.Array(Schema.String),
  securityOpt: Schema.Array(Schema.String),
  /** Bind mounts, their sources already checked to be under the user's home. */
  mounts: Schema.Array(Schema.Struct({ source: Schema.String, target: Schema.String, readOnly: Schema.Boolean }))
})
export type ContainerWidening = typeof ContainerWidening.Type

/** How the sandbox user's environment is probed, as devcontainer.json's `userEnvProbe` names the shell's mode. */
export const UserEnvProbe = Schema.Literals(["loginShell", "loginInteractiveShell", "interactiveShell"])
export type UserEnvProbe = typeof UserEnvProbe.Type

/** The step `waitFor` names: the sandbox is ready once it is done; `initializeCommand` (never run) means at once. */
export const WaitFor = Schema.Literals(["initializeCommand", ...LifecycleHook.literals])
export type WaitFor = typeof WaitFor.Type

/**
 * A volume of the sandbox's own, from the configuration's `mounts` (or a
 * `runArgs` volume): `source` names it among the sandbox's volumes (null for
 * an anonymous one); the engine makes it per sandbox and removes it with it.
 */
export const SandboxVolume = Schema.Struct({
  source: Schema.NullOr(Schema.String),
  target: Schema.String,
  readOnly: Schema.Boolean
})
export type SandboxVolume = typeof SandboxVolume.Type

/**
 * What the configuration asks of the container that widens nothing, given
 * to every repository: `runArgs` flags (`--hostname`, `--add-host` of an
 * address that is not the host's, `--security-opt no-new-privileges`,
 * `--shm-size`) and its volumes.
 */
export const ContainerOptions = Schema.Struct({
  hostname: Schema.optionalKey(Schema.String),
  /** `name:address`, as Docker's `--add-host` takes it. */
  extraHosts: Schema.Array(Schema.String),
  /** Narrowing options only (`no-new-privileges`). */
  securityOpt: Schema.Array(Schema.String),
  shmSizeMb: Schema.optionalKey(Schema.Int),
  volumes: Schema.Array(SandboxVolume)
})
export type ContainerOptions = typeof ContainerOptions.Type

/**
 * Everything the engine needs to (re)create and (re)start a sandbox's
 * container, resolved once at create and kept on the row, so a restart or an
 * update runs what the create decided. Internal: not part of the API view.
 */
export const EnvironmentPlan = Schema.Struct({
  /** The image the container runs (a built image's content tag, or the named image). */
  image: Schema.String,
  containerEnv: Schema.Record(Schema.String, Schema.String),
  /** Env for the lifecycle commands and code-server's terminals, `${containerEnv:X}` resolved. */
  remoteEnv: Schema.Record(Schema.String, Schema.String),
  /** The user name the configuration asked for (the sandbox still runs as the workspace owner's uid). */
  remoteUser: Schema.NullOr(Schema.String),
  /** Absolute path of the workspace inside the container. */
  workspaceFolder: Schema.String,
  forwardPorts: Schema.Array(Schema.Union([Schema.Int, Schema.String])),
  portsAttributes: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown)),
  cpus: Schema.NullOr(Schema.Number),
  memoryMb: Schema.NullOr(Schema.Int),
  extensions: Schema.Array(Schema.String),
  steps: Schema.Array(LifecycleStep),
  /**
   * "included": the image runs code-server itself (its `dev.prbox.code-server`
   * label says so); absent: prbox mounts its own distribution.
   */
  codeServer: Schema.optionalKey(Schema.Literal("included")),
  /** Absent on rows older than it, and when the configuration asks for none. */
  container: Schema.optionalKey(ContainerOptions),
  /** Present only for a trusted repository that asked for more. */
  widening: Schema.optionalKey(ContainerWidening),
  /**
   * `overrideCommand: false`: the image's ENTRYPOINT and CMD, run as the
   * container's main process (prbox's code-server beside it). Absent:
   * code-server is the main process.
   */
  imageCommand: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Docker's init for an `imageCommand` container (code-server's always has one). */
  init: Schema.optionalKey(Schema.Boolean),
  /**
   * The image's merged metadata's `entrypoint`s (features'), in order: run by
   * the container's shell when it starts, before code-server (and so before
   * the lifecycle steps), as the devcontainers CLI chains them. Absent: none.
   */
  entrypoints: Schema.optionalKey(Schema.Array(Schema.String)),
  /**
   * The remote user's uid was mapped to the workspace owner's in `image`
   * (`updateRemoteUserUID`): its own name and home (`$HOME` from the image)
   * are the sandbox user's.
   */
  remoteUserMapped: Schema.optionalKey(Schema.Boolean),
  /** The user's environment probed with this shell mode, for lifecycle commands and code-server; absent: none. */
  userEnvProbe: Schema.optionalKey(UserEnvProbe),
  /** Ready once this step is done, the later ones running on; absent: ready after every step. */
  waitFor: Schema.optionalKey(WaitFor),
  /**
   * A Docker Compose devcontainer: the container is `service` of the
   * sandbox's Compose project, made with `services` (the checked project
   * is in prbox's state). Absent: a single container.
   */
  compose: Schema.optionalKey(
    Schema.Struct({
      service: Schema.String,
      services: Schema.Array(Schema.String),
      /**
       * The other services the app reaches by name, with their declared
       * ports: what previews may dial (ServicePreview.ts). Absent on rows
       * older than it: no service previews.
       */
      reachable: Schema.optionalKey(Schema.Array(ReachableService))
    })
  )
})
export type EnvironmentPlan = typeof EnvironmentPlan.Type

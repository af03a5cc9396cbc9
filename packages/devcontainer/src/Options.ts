import type { EnvironmentPlan, UserEnvProbe, WaitFor } from "@prbox/domain"
import type { DevcontainerConfig } from "./Config.ts"
import { isRootUser } from "./Policy.ts"

// How the container runs, as VS Code reads it: the properties below merged
// over the image label's entries then devcontainer.json, as the devcontainers
// CLI's `mergeConfiguration` (src/spec-node/imageMetadata.ts) merges them.

export interface Options {
  /** false: the image's ENTRYPOINT/CMD is the container's main process. Last one set wins. */
  readonly overrideCommand: boolean | undefined
  /** Docker's init: any entry asking for it. */
  readonly init: boolean
  /** Last one set wins; undefined is the CLI's default (on, on Linux). */
  readonly updateRemoteUserUID: boolean | undefined
  /** Last one set wins; undefined is the spec's default, `loginInteractiveShell`. */
  readonly userEnvProbe: UserEnvProbe | "none" | undefined
  /** Last one set wins; undefined is the spec's default, `updateContentCommand`. */
  readonly waitFor: WaitFor | undefined
  /** Some entry asks for a GPU (`true`, `"optional"` or a size): prbox gives none. */
  readonly gpu: "required" | "optional" | undefined
}

const lastSet = <A>(entries: ReadonlyArray<DevcontainerConfig>, pick: (entry: DevcontainerConfig) => A | undefined) =>
  entries.reduce<A | undefined>((found, entry) => pick(entry) ?? found, undefined)

// mergeGpuRequirements: false/undefined give way to the other; "optional" only when every ask is.
const gpuOf = (entries: ReadonlyArray<DevcontainerConfig>): Options["gpu"] =>
  entries.reduce<Options["gpu"]>((found, entry) => {
    const gpu = entry.hostRequirements?.gpu
    if (gpu === undefined || gpu === false) return found
    return gpu === "optional" && found !== "required" ? "optional" : "required"
  }, undefined)

/** The entries' options, in merge order (image label first, devcontainer.json last). */
export const mergeOptions = (entries: ReadonlyArray<DevcontainerConfig>): Options => ({
  overrideCommand: lastSet(entries, (entry) => entry.overrideCommand),
  init: entries.some((entry) => entry.init === true),
  updateRemoteUserUID: lastSet(entries, (entry) => entry.updateRemoteUserUID),
  userEnvProbe: lastSet(entries, (entry) => entry.userEnvProbe),
  waitFor: lastSet(entries, (entry) => entry.waitFor),
  gpu: gpuOf(entries)
})

/** What prbox cannot give of the options, as warnings (never a failure). */
export const optionWarnings = (options: Options): ReadonlyArray<string> =>
  options.gpu === undefined
    ? []
    : [
        options.gpu === "optional"
          ? "hostRequirements.gpu: prbox gives a sandbox no GPU; it runs without one, as the configuration allows"
          : "hostRequirements.gpu: prbox gives a sandbox no GPU; it runs without one, and what needs a GPU will not find it"
      ]

/** A user name the uid update can look up in the image's /etc/passwd (not a uid, not `user:group`). */
const USER_NAME = /^[a-z_][a-z0-9_.-]*\$?$/i

/** What the options add to the plan, and whose uid the engine maps. */
export interface PlannedOptions {
  readonly plan: Pick<EnvironmentPlan, "imageCommand" | "init" | "userEnvProbe" | "waitFor">
  /**
   * The remote user whose uid and gid the engine maps to the workspace
   * owner's in a derived image (`updateRemoteUserUID`), or null.
   */
  readonly mapUser: string | null
  readonly warnings: ReadonlyArray<string>
}

/**
 * The options as the plan holds them, with the spec's and the CLI's defaults:
 * `overrideCommand` true for an image or a Dockerfile and false for Docker
 * Compose (`compose`: the service's own command runs), `userEnvProbe`
 * `loginInteractiveShell`, `waitFor` `updateContentCommand`, and
 * `updateRemoteUserUID` on for a named non-root remote user
 * (`getRemoteUserUIDUpdateDetails`, src/spec-node/containerFeatures.ts:
 * root or a numeric user is left alone). The CLI updates the uid on Linux
 * hosts only; prbox's sandbox runs as the workspace owner's uid on every
 * host, so it maps everywhere.
 */
export const planOptions = (
  options: Options,
  remoteUser: string | null,
  image: { readonly entrypoint?: ReadonlyArray<string>; readonly cmd?: ReadonlyArray<string> },
  compose = false
): PlannedOptions => {
  const warnings = [...optionWarnings(options)]
  const named = remoteUser !== null && !isRootUser(remoteUser) && USER_NAME.test(remoteUser) ? remoteUser : null
  if (named !== null && options.updateRemoteUserUID === false) {
    warnings.push(
      `updateRemoteUserUID: false: ${named} keeps the image's uid; the sandbox still runs as the workspace owner's uid, which is not ${named}'s`
    )
  }
  const probe = options.userEnvProbe ?? "loginInteractiveShell"
  return {
    plan: {
      ...((options.overrideCommand ?? !compose) === false
        ? { imageCommand: [...(image.entrypoint ?? []), ...(image.cmd ?? [])], init: options.init }
        : {}),
      ...(probe === "none" ? {} : { userEnvProbe: probe }),
      waitFor: options.waitFor ?? "updateContentCommand"
    },
    mapUser: options.updateRemoteUserUID === false ? null : named,
    warnings
  }
}

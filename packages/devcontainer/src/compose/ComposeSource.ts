import { Effect } from "effect"
import type { DevcontainerConfig } from "../Config.ts"
import { DevcontainerError } from "../Errors.ts"
import { folderOf, resolveInRepository } from "../Paths.ts"

// devcontainer.json's Docker Compose form, read as the devcontainers CLI reads
// it (src/spec-node/dockerCompose.ts, src/spec-configuration/configuration.ts):
// `dockerComposeFile` (one or several, relative to devcontainer.json's
// folder, given to Compose in order), `service`, `runServices` (unset: every
// service starts) and `shutdownAction` (default `stopCompose`).

export interface ComposeSource {
  readonly _tag: "Compose"
  /** Repository-relative, in the order Compose merges them. */
  readonly files: ReadonlyArray<string>
  /** The service the sandbox is. */
  readonly service: string
  /** The services to start with it; undefined: every service of the project. */
  readonly runServices: ReadonlyArray<string> | undefined
  readonly shutdownAction: "none" | "stopCompose"
}

/** Whether devcontainer.json is the Compose form (the CLI decides by `dockerComposeFile` alone). */
export const isComposeConfig = (config: DevcontainerConfig): boolean =>
  config.dockerComposeFile !== undefined || config.service !== undefined || config.runServices !== undefined

const fail = (file: string, property: string, detail: string) =>
  Effect.fail(new DevcontainerError({ file, property, detail }))

/** Compose's service names (its schema's pattern): anything else is refused without echoing it. */
export const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/

/** The Compose source of a Compose devcontainer.json, with what it sets that Compose does not use as warnings. */
export const composeSource = (
  file: string,
  config: DevcontainerConfig,
  warn: (warning: string) => void
): Effect.Effect<ComposeSource, DevcontainerError> => {
  const written = config.dockerComposeFile
  if (written === undefined) return fail(file, "dockerComposeFile", "missing: service and runServices need it")
  // The CLI's fallback for none (COMPOSE_FILE, the host's .env, the current folder) reads the host.
  const list = typeof written === "string" ? [written] : written
  if (list.length === 0) return fail(file, "dockerComposeFile", "names no Compose file")
  const files: Array<string> = []
  for (const [index, one] of list.entries()) {
    const property = typeof written === "string" ? "dockerComposeFile" : `dockerComposeFile[${index}]`
    const resolved = resolveInRepository(folderOf(file), one)
    if (resolved === undefined || resolved === ".") {
      return fail(file, property, "must be a relative path to a file inside the repository")
    }
    files.push(resolved)
  }
  if (config.service === undefined) return fail(file, "service", "missing: a Compose devcontainer names its service")
  if (!SERVICE_NAME.test(config.service)) return fail(file, "service", "is not a Compose service name")
  const bad = config.runServices?.findIndex((name) => !SERVICE_NAME.test(name)) ?? -1
  if (bad >= 0) return fail(file, `runServices[${bad}]`, "is not a Compose service name")
  for (const property of ["image", "build", "dockerFile", "context", "appPort", "workspaceMount"] as const) {
    if (config[property] !== undefined) warn(`${file}: ${property} is not used by a Docker Compose devcontainer`)
  }
  if (config.runArgs !== undefined) warn(`${file}: runArgs is not used by a Docker Compose devcontainer`)
  if (config.shutdownAction === "stopContainer") {
    warn(`${file}: shutdownAction "stopContainer" is for image and Dockerfile devcontainers; read as "stopCompose"`)
  }
  return Effect.succeed({
    _tag: "Compose",
    files,
    service: config.service,
    runServices: config.runServices,
    shutdownAction: config.shutdownAction === "none" ? "none" : "stopCompose"
  })
}

/**
 * What prbox reads of the Compose form but does not do, for the
 * environment's `ignored` list (and one warning). `shutdownAction: none`
 * keeps the containers running when the editor's window closes; prbox has no
 * window, and its stops (`prbox stop`, gc's idle stop, delete) are the
 * user's decisions: a repository must not keep containers running past them.
 */
export const composeIgnored = (
  source: ComposeSource
): ReadonlyArray<{ readonly property: string; readonly detail: string }> =>
  source.shutdownAction === "none"
    ? [{ property: "shutdownAction", detail: "none: prbox stops the whole project on stop and idle" }]
    : []

/** What a Compose devcontainer.json asks of its container: the keys Compose does not use taken out (the CLI ignores them). */
export const composeRequestConfig = (config: DevcontainerConfig): DevcontainerConfig => {
  const { runArgs: _runArgs, appPort: _appPort, workspaceMount: _mount, build: _build, ...used } = config
  return used
}

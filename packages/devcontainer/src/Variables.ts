// The spec's `${...}` variables. PR content must not read the host: a
// `${localEnv:X}` becomes its default (or "") with a warning, and the host's
// workspace path is never handed out. Unknown variables stay as written, as
// the reference implementation leaves them.

export interface VariableContext {
  /** The container's workspace folder (`${containerWorkspaceFolder}`). */
  readonly containerWorkspaceFolder: string
  /** The repository's name (`${localWorkspaceFolderBasename}`: prbox's checkout folder is named after it). */
  readonly workspaceBasename: string
  /** The container's environment (image env then containerEnv), once known; before that `${containerEnv:…}` stays. */
  readonly containerEnv?: Readonly<Record<string, string>>
  /**
   * `${devcontainerId}`: stable for the sandbox's life, rebuilds included
   * (devcontainerIdOf). Known once the sandbox is; before that it stays as
   * written, as the CLI leaves it until its id labels exist.
   */
  readonly devcontainerId?: string
}

const variable = /\$\{([^}]*)\}/g

const basename = (path: string) =>
  path
    .split("/")
    .filter((part) => part !== "")
    .at(-1) ?? ""

/**
 * Replaces the variables in one value. `where` names the property for the
 * warnings (never the value: it is PR content).
 */
export const substitute = (
  value: string,
  context: VariableContext,
  where: string,
  warn: (warning: string) => void
): string =>
  value.replace(variable, (whole, body: string) => {
    const [kind = "", name = "", ...rest] = body.split(":")
    const fallback = rest.length > 0 ? rest.join(":") : undefined
    switch (kind) {
      case "localWorkspaceFolderBasename":
        return context.workspaceBasename
      case "containerWorkspaceFolder":
        return context.containerWorkspaceFolder
      case "containerWorkspaceFolderBasename":
        return basename(context.containerWorkspaceFolder)
      case "devcontainerId":
        return context.devcontainerId ?? whole
      case "localEnv":
      case "env":
        warn(
          `${where}: \${localEnv:…} is not read from the host (PR content must not read your environment); using ${fallback === undefined ? "an empty value" : "its default"}`
        )
        return fallback ?? ""
      case "containerEnv":
        if (context.containerEnv === undefined) return whole
        return context.containerEnv[name] ?? fallback ?? ""
      case "localWorkspaceFolder":
        warn(
          `${where}: \${localWorkspaceFolder} is a path on the host, which prbox does not give the container; left as written`
        )
        return whole
      default:
        warn(`${where}: a \${…} variable prbox does not know is left as written`)
        return whole
    }
  })

/** `substitute` over every value of a record. */
export const substituteRecord = <V extends string | null>(
  record: Readonly<Record<string, V>>,
  context: VariableContext,
  where: string,
  warn: (warning: string) => void
): Record<string, V> =>
  Object.fromEntries(
    Object.entries(record).map(([key, value]) => [
      key,
      value === null ? value : substitute(value, context, `${where}.${key}`, warn)
    ])
  ) as Record<string, V>

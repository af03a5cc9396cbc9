import { Effect } from "effect"
import { DevcontainerError } from "../Errors.ts"

// The short feature ids of the old vscode-dev-containers features
// (`"docker-in-docker": {}`, `"terraform": "latest"`), read as the
// devcontainers CLI reads them (getBackwardCompatibleFeatureId and
// updateDeprecatedFeaturesIntoOptions, src/spec-configuration/
// containerFeaturesConfiguration.ts): each is the current feature of that
// name (or its new name) at major version 1, and `gradle`, `maven` and
// `jupyterlab` are options of `java` and `python`. Where those features are
// published is config.json's `featuresRegistry` (`<host>/<namespace>`): no
// registry host is written here.

const MIGRATED = new Set([
  "aws-cli",
  "azure-cli",
  "desktop-lite",
  "docker-in-docker",
  "docker-from-docker",
  "dotnet",
  "git",
  "git-lfs",
  "github-cli",
  "java",
  "kubectl-helm-minikube",
  "node",
  "powershell",
  "python",
  "ruby",
  "rust",
  "sshd",
  "terraform"
])

const RENAMED: Readonly<Record<string, string>> = { golang: "go", common: "common-utils" }

const INTO_OPTIONS: Readonly<Record<string, { readonly mapTo: string; readonly options: Record<string, boolean> }>> = {
  gradle: { mapTo: "java", options: { installGradle: true } },
  maven: { mapTo: "java", options: { installMaven: true } },
  jupyterlab: { mapTo: "python", options: { installJupyterlab: true } }
}

/** The CLI pins a mapped short id to major version 1. */
const VERSION = "1"

/** Whether `key` is one of the short ids the devcontainers CLI maps. */
export const isDeprecatedFeatureId = (key: string): boolean =>
  MIGRATED.has(key) || key in RENAMED || key in INTO_OPTIONS

const optionsOf = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? { ...(value as Record<string, unknown>) }
    : typeof value === "string"
      ? { version: value }
      : {}

/**
 * devcontainer.json's `features` with each deprecated short id replaced by
 * the reference the devcontainers CLI reads it as, under `featuresRegistry`
 * (a warning each); without the setting, a short id the CLI maps is an
 * error naming the setting. Other keys are left as written.
 */
export const mapDeprecatedFeatures = (
  file: string,
  features: Readonly<Record<string, unknown>>,
  featuresRegistry: string | undefined,
  warn: (warning: string) => void
): Effect.Effect<Readonly<Record<string, unknown>>, DevcontainerError> => {
  const deprecated = Object.keys(features).find(isDeprecatedFeatureId)
  if (deprecated === undefined) return Effect.succeed(features)
  if (featuresRegistry === undefined) {
    return Effect.fail(
      new DevcontainerError({
        file,
        property: `features[${JSON.stringify(deprecated)}]`,
        detail: `a deprecated short feature id: set "featuresRegistry" in your config.json (where the devcontainers features are published, "<host>/<namespace>") to read it as the devcontainers CLI does, as <featuresRegistry>/<id>:${VERSION}`
      })
    )
  }
  const base = featuresRegistry.replace(/\/+$/, "")
  const entries: Array<[string, unknown]> = Object.entries(features)
  // The options first (updateDeprecatedFeaturesIntoOptions), into a feature named as written or fully.
  for (const [key, { mapTo, options }] of Object.entries(INTO_OPTIONS)) {
    if (!(key in features)) continue
    warn(
      `${file}: features["${key}"] is deprecated: read as the ${mapTo} feature's options, as the devcontainers CLI does`
    )
    const full = `${base}/${mapTo}`
    const target = entries.find(([name]) => name === mapTo || name === full || name.startsWith(`${full}:`))
    if (target === undefined) entries.push([`${full}:${VERSION}`, { ...options }])
    else target[1] = { ...optionsOf(target[1]), ...options }
  }
  const mapped: Record<string, unknown> = {}
  for (const [key, value] of entries) {
    if (key in INTO_OPTIONS) continue
    const id = MIGRATED.has(key) ? key : RENAMED[key]
    if (id === undefined) {
      mapped[key] = value
      continue
    }
    const reference = `${base}/${id}:${VERSION}`
    warn(`${file}: features["${key}"] is a deprecated short id: read as ${reference}, as the devcontainers CLI does`)
    mapped[reference] = value
  }
  return Effect.succeed(mapped)
}

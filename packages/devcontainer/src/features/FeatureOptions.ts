import type { FeatureMetadata } from "./FeatureMetadata.ts"

// A feature's options reach its install.sh as environment variables, per the
// features spec: the option id in upper case with every other character an
// underscore, defaults from devcontainer-feature.json, values from
// devcontainer.json. A string value sets the `version` option when there is
// one (the spec's shorthand, `"node": "18"`); `true` or `{}` takes the defaults.

/** A value as devcontainer.json gives it for one feature. */
export type FeatureValue = string | boolean | Readonly<Record<string, string | boolean>>

/** The devcontainers CLI's `getSafeId`: a variable name from an option id. */
export const safeId = (name: string): string =>
  name
    .replace(/[^\w_]/g, "_")
    .replace(/^[\d_]+/g, "_")
    .toUpperCase()

/** Every option's value: the defaults, then what devcontainer.json sets. */
export const optionValues = (
  metadata: FeatureMetadata,
  value: FeatureValue
): Readonly<Record<string, string | boolean>> => {
  const defaults: Record<string, string | boolean> = {}
  for (const [name, option] of Object.entries(metadata.options ?? {})) {
    if (option.default !== undefined) defaults[name] = option.default
  }
  if (typeof value === "object") return { ...defaults, ...value }
  if (typeof value === "string" && metadata.options?.version !== undefined) return { ...defaults, version: value }
  return defaults
}

/** A value for a POSIX shell, quoted so the shell takes it literally. */
export const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`

/** `devcontainer-features.env`: one `NAME='value'` line per option, sorted, sourced with `set -a`. */
export const optionsEnvFile = (values: Readonly<Record<string, string | boolean>>): string =>
  Object.entries(values)
    .map(([name, value]) => `${safeId(name)}=${shellQuote(String(value))}`)
    .sort()
    .join("\n")
    .concat("\n")

/** A user name or uid that can be written into a build step as it is. */
export const isPlainUser = (user: string): boolean => /^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/.test(user)

/**
 * The wrapper each feature's install runs through (as the devcontainers CLI's
 * `devcontainer-features-install.sh`): the builtin variables and the
 * options exported, then the feature's install.sh, in its own folder.
 */
export const installWrapper = (key: string, metadata: FeatureMetadata): string =>
  [
    "#!/bin/sh",
    "set -e",
    `echo ${shellQuote(`Feature: ${metadata.name ?? metadata.id} (${key}) ${metadata.version ?? ""}`.trim())}`,
    "set -a",
    ". ../devcontainer-features.builtin.env",
    ". ./devcontainer-features.env",
    "set +a",
    "chmod +x ./install.sh",
    "./install.sh",
    ""
  ].join("\n")

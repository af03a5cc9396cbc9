import { type FeatureMetadata, labelEntry } from "./FeatureMetadata.ts"
import { installWrapper, isPlainUser, optionsEnvFile } from "./FeatureOptions.ts"

// The image build that installs a feature set on top of the base image, as
// the devcontainers CLI lays it out (containerFeaturesConfiguration.ts
// `getContainerFeaturesBaseDockerFile`, `getFeatureLayers`): as root, one
// step per feature in install order, each feature's containerEnv set before
// its install, the image's user restored at the end. Features are build
// steps: the same trust as the PR's Dockerfile, inside the build only.

/** A feature of the set, in install order, with what it is installed from. */
export interface FeatureToInstall {
  /** The key devcontainer.json (or a dependency) names it by. */
  readonly key: string
  readonly metadata: FeatureMetadata
  readonly values: Readonly<Record<string, string | boolean>>
  /** An archive the engine writes into the context (unpacked by the build), or a folder's text files. */
  readonly content:
    | { readonly _tag: "Archive" }
    | { readonly _tag: "Files"; readonly files: ReadonlyArray<{ readonly path: string; readonly text: string }> }
}

export interface FeatureBuildInput {
  readonly baseImage: string
  /** The image's USER ("" for root). */
  readonly imageUser: string
  readonly containerUser: string
  readonly remoteUser: string
  /** The base image's `devcontainer.metadata` label, kept before the features' entries. */
  readonly baseLabel: string | undefined
  readonly features: ReadonlyArray<FeatureToInstall>
}

/** The build context: text files to write, where each archive goes, the Dockerfile and the label. */
export interface FeatureBuildContext {
  readonly dockerfile: string
  readonly files: ReadonlyArray<{ readonly path: string; readonly text: string }>
  /** Context path of each Archive feature's bytes, by its index in `features`. */
  readonly archives: ReadonlyArray<{ readonly index: number; readonly path: string }>
  readonly label: string
  readonly warnings: ReadonlyArray<string>
}

const DEST = "/tmp/dev-container-features"
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/

// The CLI's `getEntPasswdShellCommand`, for a name already known to be plain.
const homeOf = (user: string) =>
  `$( (command -v getent >/dev/null 2>&1 && getent passwd ${user} || grep -E '^${user}:|^[^:]*:[^:]*:${user}:' /etc/passwd || true) | cut -d: -f6)`

// The CLI's `generateContainerEnvs`: quotes and backslashes escaped; `$` kept, so `${PATH}` expands.
const envLine = (name: string, value: string) => `ENV ${name}="${value.replace(/(?=["\\])/g, "\\")}"`

/** The base label's entries as they are (a single object counts as one entry). */
const baseEntries = (label: string | undefined): ReadonlyArray<unknown> => {
  if (label === undefined || label.trim() === "") return []
  try {
    const value: unknown = JSON.parse(label)
    return Array.isArray(value) ? value : [value]
  } catch {
    return []
  }
}

export const featureBuild = (input: FeatureBuildInput): FeatureBuildContext => {
  const warnings: Array<string> = []
  const user = (name: string, what: string) => {
    if (name === "" || isPlainUser(name)) return name === "" ? "root" : name
    warnings.push(`${what} is not a plain user name; features are installed for root`)
    return "root"
  }
  const containerUser = user(input.containerUser, "the container user")
  const remoteUser = user(input.remoteUser, "the remote user")
  const files: Array<{ path: string; text: string }> = [
    {
      path: "prbox-features/devcontainer-features.builtin.env",
      text: `_CONTAINER_USER=${containerUser}\n_REMOTE_USER=${remoteUser}\n`
    }
  ]
  const archives: Array<{ index: number; path: string }> = []
  const lines = [
    `FROM ${input.baseImage}`,
    "USER root",
    `COPY prbox-features/ ${DEST}/`,
    `RUN echo "_CONTAINER_USER_HOME=${homeOf(containerUser)}" >> ${DEST}/devcontainer-features.builtin.env && echo "_REMOTE_USER_HOME=${homeOf(remoteUser)}" >> ${DEST}/devcontainer-features.builtin.env`
  ]
  input.features.forEach((feature, index) => {
    const folder = `prbox-features/${index}`
    files.push({ path: `${folder}/devcontainer-features.env`, text: optionsEnvFile(feature.values) })
    files.push({
      path: `${folder}/devcontainer-features-install.sh`,
      text: installWrapper(feature.key, feature.metadata)
    })
    for (const [name, value] of Object.entries(feature.metadata.containerEnv ?? {})) {
      if (envName.test(name)) lines.push(envLine(name, value))
      else warnings.push(`feature ${feature.key}: containerEnv ${JSON.stringify(name)} is not a variable name; skipped`)
    }
    if (feature.content._tag === "Archive") {
      archives.push({ index, path: `archives/${index}.tar` })
      lines.push(`ADD archives/${index}.tar ${DEST}/${index}/`)
    } else {
      for (const file of feature.content.files) files.push({ path: `${folder}/${file.path}`, text: file.text })
    }
    lines.push(`RUN cd ${DEST}/${index} && chmod -R 0755 . && ./devcontainer-features-install.sh`)
  })
  lines.push(`USER ${input.imageUser === "" ? "root" : input.imageUser}`)
  const label = JSON.stringify([
    ...baseEntries(input.baseLabel),
    ...input.features.map((feature) => labelEntry(feature.key, feature.metadata))
  ])
  return { dockerfile: `${lines.join("\n")}\n`, files, archives, label, warnings }
}

import { FEATURE_FILE, lockFilePath, type Pins, parseLockFile, type RequestedFeature } from "@prbox/devcontainer"
import { Effect } from "effect"
import { FeatureUnavailable } from "./Errors.ts"

/** Read access to the PR's files (its commit, or a running sandbox's workspace through the engine). */
export interface PullRequestFiles {
  readonly read: (path: string) => Effect.Effect<string | undefined, { readonly message: string }>
  readonly list: (
    dir: string
  ) => Effect.Effect<
    ReadonlyArray<{ readonly name: string; readonly type: "file" | "dir" }> | undefined,
    { readonly message: string }
  >
  /**
   * A file's bytes whole (a binary file too), up to `maxBytes`; undefined
   * when there is none. Absent where a source reads text only: a copy
   * that needs bytes then fails rather than damage a file.
   */
  readonly readBytes?: (
    path: string,
    maxBytes: number
  ) => Effect.Effect<Uint8Array | undefined, { readonly message: string }>
}

/** A local feature's files, read from the PR (text; the spec's features are scripts). */
export type LocalFeatureFiles = ReadonlyArray<{ readonly path: string; readonly text: string }>

/** What the features of a devcontainer.json need from the PR itself, read when its environment is chosen. */
export interface FeatureInputs {
  /** devcontainer-lock.json's pins, when the PR has one. */
  readonly pins: Pins
  /** Whether the PR has a devcontainer-lock.json: it then governs, and prbox keeps no pins of its own. */
  readonly lockFile: boolean
  /** Each local feature's folder (repo-relative) → its files. */
  readonly local: Readonly<Record<string, LocalFeatureFiles>>
}

export const noFeatureInputs: FeatureInputs = { pins: {}, lockFile: false, local: {} }

const MAX_FILES = 200
const MAX_BYTES = 2 * 1024 * 1024
const MAX_DEPTH = 6

/** A local feature's folder, file by file (bounded: PR content). */
const readFolder = (files: PullRequestFiles, key: string, folder: string) =>
  Effect.gen(function* () {
    const failed = (detail: string) => new FeatureUnavailable({ feature: key, source: folder, detail })
    const found: Array<{ path: string; text: string }> = []
    let bytes = 0
    // `dir` is relative to the feature's folder: "" for the folder itself.
    const walk = (dir: string, depth: number): Effect.Effect<void, FeatureUnavailable> =>
      Effect.gen(function* () {
        const at = dir === "" ? folder : `${folder}/${dir}`
        const entries = yield* files.list(at).pipe(Effect.mapError((error) => failed(error.message)))
        if (entries === undefined) return yield* failed("the folder is not in the pull request")
        for (const entry of entries) {
          const path = dir === "" ? entry.name : `${dir}/${entry.name}`
          if (entry.type === "dir") {
            if (depth >= MAX_DEPTH) return yield* failed(`more than ${MAX_DEPTH} folders deep`)
            yield* walk(path, depth + 1)
            continue
          }
          const text = yield* files.read(`${folder}/${path}`).pipe(Effect.mapError((error) => failed(error.message)))
          if (text === undefined) continue
          bytes += text.length
          found.push({ path, text })
          if (found.length > MAX_FILES || bytes > MAX_BYTES) {
            return yield* failed(`larger than ${MAX_FILES} files or ${MAX_BYTES} bytes`)
          }
        }
      })
    yield* walk("", 0)
    if (!found.some((file) => file.path === FEATURE_FILE)) return yield* failed(`it has no ${FEATURE_FILE}`)
    if (!found.some((file) => file.path === "install.sh")) return yield* failed("it has no install.sh")
    return found
  })

/** The lock file's pins and the local features' files, from the PR's own files. */
export const readFeatureInputs = Effect.fn("Features.readInputs")(function* (
  files: PullRequestFiles,
  configFile: string,
  features: ReadonlyArray<RequestedFeature>
) {
  if (features.length === 0) return noFeatureInputs
  const lockPath = lockFilePath(configFile)
  const lockText = yield* files
    .read(lockPath)
    .pipe(
      Effect.mapError((error) => new FeatureUnavailable({ feature: lockPath, source: lockPath, detail: error.message }))
    )
  const pins =
    lockText === undefined
      ? {}
      : yield* parseLockFile(lockPath, lockText).pipe(
          Effect.mapError(
            (error) => new FeatureUnavailable({ feature: lockPath, source: lockPath, detail: error.message })
          )
        )
  const local: Record<string, LocalFeatureFiles> = {}
  for (const { reference } of features) {
    if (reference._tag === "Local") local[reference.folder] = yield* readFolder(files, reference.key, reference.folder)
  }
  return { pins, lockFile: lockText !== undefined, local } satisfies FeatureInputs
})

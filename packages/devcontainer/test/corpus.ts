import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { parse } from "jsonc-parser"
import {
  type DevcontainerError,
  locateDevcontainer,
  parseFeatureMetadata,
  type RequestedFeature,
  readDevcontainer
} from "../src/index.ts"
import { type CorpusRenderer, composeReason, standInRenderer } from "./corpusCompose.ts"
import { repoFiles } from "./support.ts"

// The corpus of real devcontainer.json files (test/corpus/, see its README):
// reading it, opening each file as an untrusted PR's would be, and naming why
// one does not open.

const root = join(import.meta.dirname, "corpus")

export interface CorpusEntry {
  readonly file: string
  /** "owner/name" */
  readonly repository: string
  readonly commit: string
  /** The file's path in its repository. */
  readonly path: string
}

/** Today's opening count: a change that opens fewer fails here (and in the engine's run with the real Compose). Raised as the policy widens. */
export const OPENING_FLOOR = 129

export const corpusEntries = (): ReadonlyArray<CorpusEntry> =>
  JSON.parse(readFileSync(join(root, "corpus.json"), "utf8")) as ReadonlyArray<CorpusEntry>

export const corpusText = (entry: CorpusEntry): string => readFileSync(join(root, "files", entry.file), "utf8")

interface FeatureOption {
  readonly type?: string
  readonly enum?: ReadonlyArray<string>
}

/** The local copies of the features the corpus references, by the reference as written. */
export type FeatureStore = ReadonlyMap<
  string,
  { readonly options: Readonly<Record<string, FeatureOption>>; readonly text: string }
>

export const featureStore = (): FeatureStore => {
  const sources = JSON.parse(readFileSync(join(root, "features", "sources.json"), "utf8")) as {
    readonly features: ReadonlyArray<{ readonly feature: string; readonly file: string }>
  }
  return new Map(
    sources.features.map(({ feature, file }) => {
      const json = parse(readFileSync(join(root, "features", file), "utf8")) as {
        readonly options?: Record<string, FeatureOption>
      }
      return [
        feature,
        { options: json.options ?? {}, text: readFileSync(join(root, "features", file), "utf8") }
      ] as const
    })
  )
}

/** Why a file does not open: a category for the summary and a detail for the list. */
export interface Reason {
  readonly category: string
  readonly detail: string
}

/** The local registry the tests read `<registry>` as (the corpus names no public registry host). */
export const LOCAL_REGISTRY = "localhost:5000"

/**
 * The features as an open resolves them, against the local copies instead
 * of a registry: each reference (already parsed by the reader) found in the
 * store, its devcontainer-feature.json decoded by the feature reader.
 * Options are handed to install.sh as the spec says, known or not (as the
 * devcontainers CLI does), so they are not a reason. undefined: every
 * feature resolves.
 */
export const resolveFeaturesLocally = (
  features: ReadonlyArray<RequestedFeature>,
  store: FeatureStore
): Reason | undefined => {
  for (const { reference } of features) {
    const written = reference.key.replace(LOCAL_REGISTRY, "<registry>")
    const feature = store.get(written)
    if (feature === undefined) return { category: "feature missing", detail: written }
    if (!Effect.runSync(Effect.isSuccess(parseFeatureMetadata(written, feature.text)))) {
      return { category: "feature metadata invalid", detail: written }
    }
  }
  return undefined
}

const dockerCompose = new Set(["dockerComposeFile", "service", "runServices"])

/** The reader's error as a category; "unclassified" when no rule names it. */
export const classify = (error: DevcontainerError): Reason => {
  const detail = error.message
  const property = error.property?.replace(/\[\d+\]$/, "")
  if (error.detail.startsWith("invalid JSON")) return { category: "JSONC syntax", detail }
  if (property !== undefined && dockerCompose.has(property)) return { category: "Docker Compose", detail }
  if (property?.startsWith("features[")) return { category: `feature reference: ${error.detail.split(";")[0]}`, detail }
  if (error.detail.startsWith("refused")) return { category: `refused: ${property}`, detail }
  if (error.detail === "unknown property") return { category: `unknown property: ${property}`, detail }
  if (error.detail.startsWith("set either image or build")) return { category: "both image and build", detail }
  if (error.detail.startsWith("neither image nor build")) return { category: "neither image nor build", detail }
  if (error.detail.startsWith("expected") && property !== undefined) {
    return { category: `invalid value: ${property}`, detail }
  }
  return { category: "unclassified", detail }
}

export type Outcome = { readonly entry: CorpusEntry; readonly reason: Reason | undefined }

/**
 * What an open runs in this package, as for a PR from an untrusted repository,
 * then the local feature check, then for Docker Compose the project's check.
 */
export const openCorpusFile = (entry: CorpusEntry, store: FeatureStore, renderer: CorpusRenderer = standInRenderer) =>
  Effect.gen(function* () {
    const files = repoFiles({ [entry.path]: corpusText(entry).replaceAll("<registry>", LOCAL_REGISTRY) })
    const opened = yield* Effect.result(
      Effect.gen(function* () {
        const located = yield* locateDevcontainer(files)
        if (located === undefined) return yield* Effect.die(new Error(`${entry.file}: not located at ${entry.path}`))
        return yield* readDevcontainer({
          located,
          host: "github.com",
          repository: entry.repository,
          trustedRepositories: [],
          // The user's config.json naming where the devcontainers features are (deprecated short ids).
          featuresRegistry: `${LOCAL_REGISTRY}/devcontainers/features`
        })
      })
    )
    const reason =
      opened._tag === "Failure"
        ? classify(opened.failure)
        : (resolveFeaturesLocally(opened.success.features, store) ??
          (yield* composeReason(entry.file, opened.success, renderer)))
    return { entry, reason } satisfies Outcome
  })

const percent = (count: number, total: number) => `${((100 * count) / total).toFixed(1)} %`

/** The summary: count and share per category, then every file that does not open with its reason. */
export const summary = (outcomes: ReadonlyArray<Outcome>): string => {
  const counts = new Map<string, number>()
  for (const { reason } of outcomes) {
    const category = reason?.category ?? "opens"
    counts.set(category, (counts.get(category) ?? 0) + 1)
  }
  const rows = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
  const width = Math.max(...rows.map(([category]) => category.length))
  return [
    `${outcomes.length} devcontainer.json files from public repositories`,
    ...rows.map(
      ([category, count]) =>
        `  ${category.padEnd(width)}  ${String(count).padStart(3)}  ${percent(count, outcomes.length)}`
    ),
    "not opening:",
    ...outcomes.flatMap(({ entry, reason }) =>
      reason === undefined ? [] : [`  ${entry.file}  [${reason.category}]  ${reason.detail}`]
    )
  ].join("\n")
}

/**
 * The corpus tests' verdict, whoever renders Compose: the summary printed,
 * every file that does not open has a named reason, and at least OPENING_FLOOR open.
 */
export const assertCorpusVerdict = (outcomes: ReadonlyArray<Outcome>): void => {
  console.log(summary(outcomes))
  const unclassified = outcomes.filter((outcome) => outcome.reason?.category === "unclassified")
  assert.deepStrictEqual(
    unclassified.map(({ entry, reason }) => `${entry.file}: ${reason?.detail}`),
    [],
    "a file fails for a reason no rule names"
  )
  const opened = outcomes.filter((outcome) => outcome.reason === undefined).length
  assert.isAtLeast(opened, OPENING_FLOOR, `${opened} of ${outcomes.length} open`)
}

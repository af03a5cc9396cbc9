import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { stringify } from "yaml"
import {
  type ComposeRead,
  checkComposeFiles,
  checkComposeProject,
  type DevcontainerSpec,
  parseRenderedCompose
} from "../src/index.ts"
import { renderCompose } from "./composeRender.ts"

// The corpus's Compose devcontainers (test/corpus/compose/, see the corpus
// README): their Compose files checked for what rendering reads on the host,
// rendered (here by a stand-in for Compose, composeRender.ts; the engine's
// CorpusCompose.test.ts by the real docker-compose), read back as the engine
// reads Compose's output, then checked as an untrusted PR's project.

const root = join(import.meta.dirname, "corpus", "compose")

interface ComposeSources {
  readonly files: ReadonlyArray<{ readonly entry: string; readonly path: string; readonly file: string }>
  readonly missing: ReadonlyArray<{ readonly entry: string; readonly path: string; readonly why: string }>
}

const sources = (): ComposeSources => JSON.parse(readFileSync(join(root, "sources.json"), "utf8")) as ComposeSources

/** Every stored Compose file's text (`file`: its path under test/corpus/compose). */
export const composeFiles = (): ReadonlyArray<{ readonly file: string; readonly text: string }> =>
  sources().files.map(({ file }) => ({ file, text: readFileSync(join(root, file), "utf8") }))

/** Where the tests pretend prbox's copy of the repository is. */
export const REPOSITORY_ROOT = "/state/sandboxes/corpus/workspace"

/** What renders a project: the Compose files, whether the corpus holds a repository path, what the pre-render check listed. */
export interface CorpusRenderer {
  /** Where the rendered project's repository is (its binds inside the repository are under it). */
  readonly root: string
  readonly render: (
    files: ReadonlyArray<{ readonly path: string; readonly text: string }>,
    exists: (path: string) => boolean,
    reads: ReadonlyArray<ComposeRead>
  ) => Effect.Effect<{ readonly ok: true; readonly text: string } | { readonly ok: false; readonly why: string }>
}

/** The stand-in for `config` (composeRender.ts): runs without Compose, as the pure tests must. */
export const standInRenderer: CorpusRenderer = {
  root: REPOSITORY_ROOT,
  render: (files, exists) =>
    Effect.sync(() => {
      const rendered = renderCompose(files, REPOSITORY_ROOT, exists)
      return rendered.ok ? { ok: true as const, text: stringify(rendered.value) } : rendered
    })
}

export interface ComposeReason {
  readonly category: string
  readonly detail: string
}

/** Why the Compose devcontainer `entry` does not open (undefined: it opens). */
export const composeReason = (
  entry: string,
  spec: DevcontainerSpec,
  renderer: CorpusRenderer = standInRenderer
): Effect.Effect<ComposeReason | undefined> =>
  Effect.gen(function* () {
    if (spec.source._tag !== "Compose") return undefined
    const { files: wanted, service, runServices } = spec.source
    const stored = sources()
    const missing = stored.missing.find((one) => one.entry === entry)
    if (missing !== undefined) {
      return { category: "Compose file not available", detail: `${missing.path}: ${missing.why}` }
    }
    const mine = stored.files.filter((one) => one.entry === entry)
    const texts = wanted.map((path) => {
      const found = mine.find((one) => one.path === path)
      return found === undefined ? undefined : { path, text: readFileSync(join(root, found.file), "utf8") }
    })
    const absent = wanted.find((_, index) => texts[index] === undefined)
    if (absent !== undefined)
      return { category: "unclassified", detail: `${absent}: not stored in test/corpus/compose` }
    const read = texts.flatMap((text) => (text === undefined ? [] : [text]))
    const before = yield* Effect.result(checkComposeFiles(read, spec.trusted))
    if (before._tag === "Failure") {
      return { category: `Compose files refused: ${before.failure.property ?? ""}`, detail: before.failure.message }
    }
    const rendered = yield* renderer.render(read, (path) => mine.some((one) => one.path === path), before.success)
    if (!rendered.ok)
      return {
        category: `Compose rendering: ${rendered.why.replace(/ \S+ is not/, " … is not")}`,
        detail: rendered.why
      }
    const checked = yield* Effect.result(
      parseRenderedCompose(rendered.text).pipe(
        Effect.flatMap((value) =>
          checkComposeProject(value, {
            file: spec.path,
            service,
            runServices,
            repositoryRoot: renderer.root,
            trusted: spec.trusted,
            untrustedWidening: "omit",
            withheld: spec.withheld
          })
        )
      )
    )
    if (checked._tag === "Success") return undefined
    const property = checked.failure.property?.replace(/^services\.[^.]+\./, "services.*.") ?? ""
    return { category: `Compose refused: ${property}`, detail: checked.failure.message }
  })

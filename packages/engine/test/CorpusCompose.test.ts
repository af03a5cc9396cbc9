import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, it } from "@effect/vitest"
import { LOCAL_ENGINE } from "@prbox/domain"
import { Effect, Layer } from "effect"
import {
  assertCorpusVerdict,
  corpusEntries,
  featureStore,
  LOCAL_REGISTRY,
  openCorpusFile
} from "../../devcontainer/test/corpus.ts"
import type { CorpusRenderer } from "../../devcontainer/test/corpusCompose.ts"
import { ComposeCli } from "../src/ComposeCli.ts"
import * as NodeComposeCli from "../src/node/NodeComposeCli.ts"
import * as NodePlatform from "../src/node/NodePlatform.ts"

/**
 * The devcontainer corpus (packages/devcontainer/test/corpus) opened again,
 * its Compose devcontainers rendered by the real Compose (Debian's
 * docker-compose, through NodeComposeCli's scrubbed environment) instead of
 * the devcontainer project's stand-in: each project's stored Compose files
 * written to a folder, with the build contexts' folders Compose requires,
 * rendered, read back and checked as the engine does. The floor is the
 * stand-in's.
 */
const realRenderer = (compose: ComposeCli["Service"], root: string): CorpusRenderer => ({
  root,
  render: (files, _exists, reads) =>
    Effect.gen(function* () {
      rmSync(root, { recursive: true, force: true })
      mkdirSync(root, { recursive: true })
      for (const file of files) {
        mkdirSync(dirname(join(root, file.path)), { recursive: true })
        writeFileSync(join(root, file.path), file.text.replaceAll("<registry>", LOCAL_REGISTRY))
      }
      for (const read of reads) if (read.kind === "folder") mkdirSync(join(root, read.path), { recursive: true })
      const paths = files.map((file) => join(root, file.path))
      const directory = dirname(paths[0] ?? join(root, "x"))
      return yield* compose.render({ name: "prbox-corpus", directory }, paths).pipe(
        Effect.map((text) => ({ ok: true as const, text })),
        Effect.catchTag("ComposeFailed", (error) =>
          Effect.succeed({ ok: false as const, why: error.detail.replaceAll(root, "<repository>") })
        )
      )
    })
})

describe("the devcontainer corpus with the real Compose", () => {
  it.live(
    "opens at least the floor; every other file has a named reason (Compose rendered by the real docker-compose)",
    () =>
      Effect.gen(function* () {
        const compose = yield* ComposeCli
        // The real Compose must run here (scripts/setup installs it): no fallback to the stand-in.
        console.log(`rendering with ${yield* compose.version}`)
        const root = mkdtempSync(join(tmpdir(), "prbox-corpus-compose-"))
        const renderer = realRenderer(compose, join(root, "repository"))
        const store = featureStore()
        const outcomes = yield* Effect.forEach(corpusEntries(), (entry) => openCorpusFile(entry, store, renderer)).pipe(
          Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
        )
        assertCorpusVerdict(outcomes)
      }).pipe(Effect.provide(Layer.provide(NodeComposeCli.layer(LOCAL_ENGINE), NodePlatform.layer))),
    120_000
  )
})

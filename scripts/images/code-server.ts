import { execFileSync } from "node:child_process"
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import * as NodeServices from "@effect/platform-node/NodeServices"
import type { CodeServerDistribution as CodeServerDistributionShape } from "@prbox/engine"
import { CodeServerDistribution, DefaultImage } from "@prbox/engine/node"
import { Effect } from "effect"
import { cacheBase, testDistributionDir } from "./cache.ts"
import { directoryInputs, docker, type ImageRecipe } from "./images.ts"

/**
 * The code-server image the engine's code-server tests run: prbox's own
 * default image recipe (Debian by debootstrap, DefaultImage.ts) with prbox's
 * own code-server distribution (CodeServerDistribution.ts) installed under
 * /usr/local. Both are built by the product's code and cached by content.
 */
const recipeDir = join(import.meta.dirname, "code-server")
const productDir = join(import.meta.dirname, "..", "..", "packages", "engine", "src", "node", "tools")

const log = (line: string): void => {
  process.stderr.write(`[prbox images] code-server: ${line}\n`)
}

const progress = (line: string) => Effect.sync(() => log(line))

/** The tests' code-server distribution, built by the product's builder when missing. */
export const ensureTestDistribution = (): Promise<CodeServerDistributionShape> =>
  Effect.runPromise(
    CodeServerDistribution.ensureCodeServerDistribution({ dir: testDistributionDir(), onProgress: progress }).pipe(
      Effect.provide(NodeServices.layer)
    )
  )

const build = async (tag: string): Promise<void> => {
  const started = Date.now()
  const [rootfs, distribution] = await Effect.runPromise(
    Effect.all(
      [
        DefaultImage.ensureDefaultRootfs(progress),
        CodeServerDistribution.ensureCodeServerDistribution({ dir: testDistributionDir(), onProgress: progress })
      ],
      { concurrency: 2 }
    ).pipe(Effect.provide(NodeServices.layer))
  )
  const work = join(cacheBase(), "code-server-image")
  mkdirSync(work, { recursive: true })
  // This directory held the archives before the product built them: they are never used again.
  for (const file of readdirSync(work)) {
    if (/^(rootfs|code-server)-[0-9a-f]{16}\.tar$|^node-linux-/.test(file))
      rmSync(join(work, file), { recursive: true })
  }
  const context = mkdtempSync(join(work, "context."))
  try {
    linkSync(rootfs, join(context, "rootfs.tar"))
    // Hard links: the build context costs no copy of the distribution.
    execFileSync("cp", ["-al", distribution.root, join(context, "code-server")])
    copyFileSync(join(recipeDir, "Dockerfile"), join(context, "Dockerfile"))
    log(`docker build ${tag}`)
    docker(["build", "--quiet", "--tag", tag, context])
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
  log(`built ${tag} in ${Math.round((Date.now() - started) / 1000)}s`)
}

export const codeServerImage: ImageRecipe = {
  name: "code-server",
  inputs: () => [
    `code-server ${CodeServerDistribution.CODE_SERVER_VERSION}`,
    `node ${CodeServerDistribution.CODE_SERVER_NODE_VERSION}`,
    DefaultImage.DEFAULT_IMAGE,
    ...directoryInputs(recipeDir),
    ...directoryInputs(join(productDir, "code-server")),
    ...directoryInputs(join(productDir, "default-image"))
  ],
  build
}

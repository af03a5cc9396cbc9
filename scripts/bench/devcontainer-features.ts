// The features scenario of `pnpm bench devcontainer --features`: two
// features published into a real registry process on loopback (Debian's
// docker-registry), one depending on the other, referenced as
// `localhost:<port>/…` (the devcontainers CLI speaks plain HTTP to localhost
// only). Each run publishes new content, so a cold open builds anew for both tools.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { startRegistry, type TestRegistry } from "../testing/registry.ts"
import { publishFeature } from "../testing/registry-publish.ts"

export interface FeatureRegistry {
  readonly registry: TestRegistry
  readonly close: () => Promise<void>
}

/** A registry for the whole bench; `close` stops it and removes its storage. */
export const openFeatureRegistry = async (): Promise<FeatureRegistry> => {
  const scope = await Effect.runPromise(Scope.make())
  const registry = await Effect.runPromise(Scope.provide(startRegistry(), scope))
  return { registry, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const featureFolder = (root: string, metadata: Record<string, unknown>, install: string) => {
  const folder = join(root, String(metadata.id))
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, "devcontainer-feature.json"), JSON.stringify(metadata))
  writeFileSync(join(folder, "install.sh"), `#!/bin/sh\nset -e\n${install}\n`)
  return folder
}

/** Publishes this run's two features (`tag` new per run) and returns devcontainer.json's `features`. */
export const publishBenchFeatures = async (registry: TestRegistry, root: string, tag: string) => {
  const base = `${registry.host}/bench`
  const work = join(root, `features-${tag}`)
  await Effect.runPromise(
    publishFeature(registry, {
      repository: "bench/tool-base",
      tag,
      folder: featureFolder(
        work,
        { id: "tool-base", version: "1.0.0" },
        `mkdir -p /opt/tool-base && seq 1 20000 > /opt/tool-base/data # ${tag}`
      )
    })
  )
  await Effect.runPromise(
    publishFeature(registry, {
      repository: "bench/tool",
      tag,
      folder: featureFolder(
        work,
        {
          id: "tool",
          version: "1.0.0",
          options: { level: { type: "string", default: "1" } },
          containerEnv: { TOOL_HOME: "/opt/tool" },
          dependsOn: { [`${base}/tool-base:${tag}`]: {} }
        },
        `mkdir -p /opt/tool && echo "level $LEVEL" > /opt/tool/level # ${tag}`
      )
    })
  )
  return { [`${base}/tool:${tag}`]: { level: "2" } }
}

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import type { RegistryAuth } from "../../../scripts/testing/registry.ts"

// The user's Docker credentials for a test: a temp DOCKER_CONFIG whose
// credential helper is a script on PATH that records each lookup (the way
// `docker login` with a helper leaves it). Shared by the image-pull and the
// feature-fetch tests.

/** Sets environment variables for the scope (the daemon reads DOCKER_CONFIG and PATH from its own). */
export const environment = (values: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const before = Object.fromEntries(Object.keys(values).map((key) => [key, process.env[key]]))
      Object.assign(process.env, values)
      return before
    }),
    (before) =>
      Effect.sync(() => {
        for (const [key, value] of Object.entries(before)) {
          if (value === undefined) delete process.env[key]
          else process.env[key] = value
        }
      })
  )

export interface DockerConfig {
  readonly dir: string
  /** The registries the credential helper was asked for, in order. */
  readonly asked: () => Array<string>
}

/**
 * A DOCKER_CONFIG whose `credHelpers` sends `registry` to a helper script
 * answering with `auth` (the way `docker login` with a helper leaves it).
 */
export const dockerConfig = (registry: string, auth: RegistryAuth) =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-docker-config-"))),
      (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
    )
    const bin = join(dir, "bin")
    mkdirSync(bin)
    const log = join(dir, "asked")
    const helper = join(bin, "docker-credential-prbox-test")
    const answer = JSON.stringify({ ServerURL: registry, Username: auth.user, Secret: auth.password })
    writeFileSync(helper, `#!/bin/sh\nread -r registry\necho "$registry" >> ${log}\necho '${answer}'\n`)
    chmodSync(helper, 0o755)
    writeFileSync(join(dir, "config.json"), JSON.stringify({ credHelpers: { [registry]: "prbox-test" } }))
    yield* environment({ DOCKER_CONFIG: dir, PATH: `${bin}:${process.env.PATH ?? ""}` })
    const asked = () => {
      try {
        return readFileSync(log, "utf8").split("\n").filter(Boolean)
      } catch {
        return []
      }
    }
    return { dir, asked } satisfies DockerConfig
  })

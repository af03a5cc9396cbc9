import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent } from "@prbox/domain"
import { Effect } from "effect"
import { startRegistry, testAuth } from "../../../scripts/testing/registry.ts"
import { publishFeature } from "../../../scripts/testing/registry-publish.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { dockerConfig } from "./docker-config.ts"
import { filesContaining, healthzTag, inspectContainer, openSettled, withEngine } from "./harness.ts"

// A feature from a registry behind htpasswd auth (a real docker-registry
// process on loopback), installed by a real open: with the user's Docker
// credentials (a credential helper in a temp DOCKER_CONFIG) only when
// config.json's registryCredentials lists the registry; asked anonymously
// otherwise. The credential is nowhere prbox writes or the sandbox can read.

const inspect = (...args: ReadonlyArray<string>): string => execFileSync("docker", args, { encoding: "utf8" })

describe("a feature from a registry behind auth", () => {
  it.live(
    "listed in registryCredentials: installed with the user's login, which no row, log line, label, file or the container's environment holds; not listed: asked anonymously, and the error names the feature and the registry",
    () =>
      Effect.gen(function* () {
        const auth = testAuth()
        const basic = Buffer.from(`${auth.user}:${auth.password}`).toString("base64")
        const registry = yield* startRegistry({ auth })
        const root = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-features-auth-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        const folder = join(root, "private")
        mkdirSync(folder)
        writeFileSync(join(folder, "devcontainer-feature.json"), JSON.stringify({ id: "private", version: "1.0.0" }))
        writeFileSync(join(folder, "install.sh"), "#!/bin/sh\necho private-installed > /etc/private-feature\n")
        const published = yield* publishFeature(registry, { repository: "features/private", tag: "1", folder })
        const config = yield* dockerConfig(registry.host, auth)
        const key = `${registry.host}/features/private:1`
        const open = (pr: number, registryCredentials: ReadonlyArray<string>) =>
          withEngine(
            { config: { image: healthzTag, localRegistries: [registry.host], registryCredentials } },
            ({ remote, home }) =>
              Effect.gen(function* () {
                pushPullRequest(remote.path, pr, {
                  ".devcontainer/devcontainer.json": JSON.stringify({
                    image: DefaultImage.DEFAULT_IMAGE,
                    features: { [key]: {} }
                  })
                })
                const row = yield* openSettled(remote.path, pr)
                const lines = (yield* (yield* SandboxService).logs(row.id, { limit: 1000 })).map(describeEvent)
                const id = row.containerId
                // Read before the engine's teardown removes the container and the home.
                const seen = {
                  row: JSON.stringify(row),
                  log: lines.join("\n"),
                  container: id === null ? "" : JSON.stringify(inspectContainer(id)),
                  image: row.environment == null ? "" : inspect("image", "inspect", row.environment.image),
                  env: id === null ? "" : inspect("exec", id, "env"),
                  installed: id === null ? "" : inspect("exec", id, "cat", "/etc/private-feature").trim(),
                  files: [auth.password, basic].flatMap((secret) => filesContaining(home, secret))
                }
                return { row, seen }
              })
          )

        const listed = yield* open(71, [registry.host])
        assert.strictEqual(listed.row.status, "running", listed.row.error ?? "")
        assert.strictEqual(listed.seen.installed, "private-installed")
        assert.deepStrictEqual(listed.row.environment?.features, [{ key, digest: published.manifestDigest }])
        assert.deepStrictEqual(config.asked(), [registry.host])
        for (const secret of [auth.password, basic]) {
          for (const [where, text] of Object.entries(listed.seen)) {
            if (typeof text === "string") assert.notInclude(text, secret, where)
          }
        }
        assert.deepStrictEqual(listed.seen.files, [])

        const unlisted = yield* open(72, [])
        assert.strictEqual(unlisted.row.status, "error")
        assert.include(unlisted.row.error, `feature ${key} (${registry.host})`)
        assert.include(unlisted.row.error, `add "${registry.host}" to registryCredentials`)
        assert.isNull(unlisted.row.containerId)
        // Asked anonymously: the user's credential helper ran only for the listed open.
        assert.deepStrictEqual(config.asked(), [registry.host])
        for (const secret of [auth.password, basic]) {
          assert.notInclude(unlisted.seen.row, secret)
          assert.notInclude(unlisted.seen.log, secret)
        }
      }).pipe(Effect.scoped),
    600_000
  )
})

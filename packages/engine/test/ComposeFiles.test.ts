import { createHash } from "node:crypto"
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { LOCAL_ENGINE } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { Effect, FileSystem, Layer } from "effect"
import { makeRemote, pushPullRequest, workspacesLayer } from "../../git/test/helpers.ts"
import { ComposeCli } from "../src/ComposeCli.ts"
import { composeFolder, copyBindSources, copyComposeFiles } from "../src/environment/ComposeFiles.ts"
import * as NodeComposeCli from "../src/node/NodeComposeCli.ts"
import * as NodePlatform from "../src/node/NodePlatform.ts"

/**
 * A Compose project's files copied from the PR's commit in a real git
 * repository (the mirror's reader) into prbox's state, then rendered by the
 * real docker-compose: a symbolic link of the PR's never reaches Compose.
 */
const root = mkdtempSync(join(tmpdir(), "prbox-compose-files-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const secret = join(root, "host-secret")
writeFileSync(secret, "LEAKED=host-file-content\n")
const remote = makeRemote(root)
const commit = pushPullRequest(remote.path, 7, {
  ".devcontainer/docker-compose.yml": [
    "services:",
    "  app:",
    "    image: debian",
    "    environment:",
    "      FROM_LINK: ${LEAKED:-not-read}",
    "    volumes:",
    "      - ./db:/db:ro",
    "      - ../notes.txt:/notes.txt",
    ""
  ].join("\n"),
  // Hostile: the project's .env a link to a file of the host, and a link inside a bound folder.
  ".devcontainer/.env": { link: secret },
  ".devcontainer/db/init.sql": "select 1;\n",
  ".devcontainer/db/nested/more.sql": "select 2;\n",
  ".devcontainer/db/leak": { link: secret },
  "notes.txt": "notes\n",
  "big/unrelated.txt": "not copied\n"
})

const home = join(root, "home")
const layer = Layer.mergeAll(
  workspacesLayer(join(root, "state")),
  NodeFileSystem.layer,
  Layer.provide(NodeComposeCli.layer(LOCAL_ENGINE), NodePlatform.layer)
)

describe("a Compose project's files, from the mirror into prbox's state", () => {
  it.live("links are left out, folders 0700, Compose renders the copy without following any link", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const files = (yield* Workspaces).commitFiles(remote.path, commit)
      const folder = composeFolder(home, "sbx1")
      yield* copyComposeFiles(fs, files, folder, [".devcontainer/docker-compose.yml"], false)
      assert.strictEqual(statSync(folder.root).mode & 0o777, 0o700)
      assert.deepStrictEqual(readdirSync(join(folder.repository, ".devcontainer")).sort(), ["docker-compose.yml"])
      assert.isFalse(existsSync(join(root, "home/sandboxes/sbx1/sealed/compose/repository/big")))

      const compose = yield* ComposeCli
      const directory = join(folder.repository, ".devcontainer")
      const rendered = yield* compose.render({ name: "prbox-sbx1", directory }, [join(directory, "docker-compose.yml")])
      assert.notInclude(rendered, "host-file-content")
      assert.include(rendered, "FROM_LINK: not-read")

      yield* copyBindSources(fs, files, folder, [join(directory, "db"), join(folder.repository, "notes.txt"), "/etc"])
      assert.strictEqual(readFileSync(join(directory, "db/init.sql"), "utf8"), "select 1;\n")
      assert.strictEqual(readFileSync(join(directory, "db/nested/more.sql"), "utf8"), "select 2;\n")
      assert.isFalse(existsSync(join(directory, "db/leak")))
      assert.isTrue(lstatSync(join(folder.repository, "notes.txt")).isFile())
      assert.isFalse(existsSync(join(folder.repository, "etc")))
    }).pipe(Effect.provide(layer))
  )

  it.live("a Compose file that is a link is refused, naming it", () =>
    Effect.gen(function* () {
      const linked = pushPullRequest(remote.path, 8, {
        ".devcontainer/docker-compose.yml": { link: secret }
      })
      const fs = yield* FileSystem.FileSystem
      const files = (yield* Workspaces).commitFiles(remote.path, linked)
      const error = yield* Effect.flip(
        copyComposeFiles(fs, files, composeFolder(home, "sbx2"), [".devcontainer/docker-compose.yml"], false)
      )
      assert.include(error.message, ".devcontainer/docker-compose.yml is not a file of the pull request")
    }).pipe(Effect.provide(layer))
  )

  it.live(
    "what rendering reads in other folders is copied (env_file, extends.file and its own env_file), bytes whole",
    () =>
      Effect.gen(function* () {
        const binary = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 131 + (i >> 9)) % 256)
        const sub = pushPullRequest(remote.path, 9, {
          ".devcontainer/docker-compose.yml": [
            "services:",
            "  app:",
            "    extends: {file: ../compose/base.yml, service: base}",
            "    env_file: ../config/dev.env",
            "    build: {context: ../app, dockerfile: ../docker/Dockerfile}",
            "    volumes: ['../assets/blob.bin:/blob.bin:ro']",
            ""
          ].join("\n"),
          "config/dev.env": "FROM_ENV_FILE=config-dev\n",
          "compose/base.yml": "services:\n  base:\n    image: debian\n    env_file: base.env\n",
          "compose/base.env": "FROM_BASE=base-env\n",
          "app/main.c": "int main(void) { return 0; }\n",
          "assets/blob.bin": binary,
          "assets/other.bin": "not bound\n"
        })
        const fs = yield* FileSystem.FileSystem
        const files = (yield* Workspaces).commitFiles(remote.path, sub)
        const folder = composeFolder(home, "sbx3")
        yield* copyComposeFiles(fs, files, folder, [".devcontainer/docker-compose.yml"], false)
        // Exactly what rendering reads: the build context's folder is made, nothing of it copied.
        assert.deepStrictEqual(readdirSync(folder.repository).sort(), [".devcontainer", "app", "compose", "config"])
        assert.deepStrictEqual(readdirSync(join(folder.repository, "app")), [])
        const compose = yield* ComposeCli
        const directory = join(folder.repository, ".devcontainer")
        const rendered = yield* compose.render({ name: "prbox-sbx3", directory }, [
          join(directory, "docker-compose.yml")
        ])
        assert.include(rendered, "FROM_ENV_FILE: config-dev")
        assert.include(rendered, "FROM_BASE: base-env")

        yield* copyBindSources(fs, files, folder, [join(folder.repository, "assets/blob.bin")])
        const digest = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
        assert.strictEqual(digest(readFileSync(join(folder.repository, "assets/blob.bin"))), digest(binary))
        assert.isFalse(existsSync(join(folder.repository, "assets/other.bin")))
      }).pipe(Effect.provide(layer))
  )

  it.live("an extended file's own env_file naming a host file is refused", () =>
    Effect.gen(function* () {
      const hostile = pushPullRequest(remote.path, 10, {
        ".devcontainer/docker-compose.yml": "services:\n  app:\n    extends: {file: base.yml, service: base}\n",
        ".devcontainer/base.yml": `services:\n  base:\n    image: debian\n    env_file: ${secret}\n`
      })
      const fs = yield* FileSystem.FileSystem
      const files = (yield* Workspaces).commitFiles(remote.path, hostile)
      const error = yield* Effect.flip(
        copyComposeFiles(fs, files, composeFolder(home, "sbx4"), [".devcontainer/docker-compose.yml"], false)
      )
      assert.include(error.message, "services.base.env_file[0]")
    }).pipe(Effect.provide(layer))
  )
})

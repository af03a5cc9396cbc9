import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Effect, type Scope } from "effect"
import { ensureImage, type ImageRecipe } from "../../../scripts/images/images.ts"
import { startRegistry, type TestRegistry } from "../../../scripts/testing/registry.ts"
import { publishFeature, pushImage } from "../../../scripts/testing/registry-publish.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { DefaultImage } from "../src/node/index.ts"
import { healthzTag, inspectContainer, openSettled, withEngine } from "./harness.ts"

/**
 * A named handful of the corpus's real devcontainer.json files
 * (packages/devcontainer/test/corpus/files), opened for real, end to end:
 * each file's text as it is, `<registry>` read as a real registry process
 * on loopback. What the files name but this machine cannot fetch is made
 * here and said so:
 * - the base images are stand-ins built locally from prbox's default
 *   image (their user, a `yarn` that leaves a mark, the devcontainers
 *   images' `remoteUser` label), pushed under the names the files use;
 * - the features are published from the corpus's own copies of their
 *   `devcontainer-feature.json`, with stand-in install scripts (the real
 *   ones download toolchains) that record the options they were given;
 * - the repository's own files the commands run (a script, a Dockerfile)
 *   are stand-ins that leave a mark.
 */
const corpus = join(import.meta.dirname, "..", "..", "devcontainer", "test", "corpus")

/** A corpus file's text with `<registry>` read as the test's registry. */
const corpusFile = (name: string, registry: TestRegistry): string =>
  readFileSync(join(corpus, "files", name), "utf8").replaceAll("<registry>", registry.host)

/**
 * A stand-in for a devcontainers base image: `user` at uid 1000 as the
 * image's remote user (its `devcontainer.metadata` label, as theirs), and a
 * `yarn` that leaves a mark.
 */
const standInImage = (user: "vscode" | "node"): ImageRecipe => {
  const dockerfile = `FROM ${DefaultImage.DEFAULT_IMAGE}
RUN useradd --create-home --uid 1000 --shell /bin/bash ${user} \\
 && printf '#!/bin/sh\\necho "yarn $* as $(id -un)" > /tmp/yarn-ran\\n' > /usr/local/bin/yarn \\
 && chmod 0755 /usr/local/bin/yarn
LABEL devcontainer.metadata="[{\\"remoteUser\\":\\"${user}\\"}]"
`
  return {
    name: `corpus-stand-in-${user}`,
    inputs: () => [dockerfile],
    build: (tag) => {
      execFileSync("docker", ["build", "-q", "-t", tag, "-"], {
        input: dockerfile,
        stdio: ["pipe", "ignore", "inherit"]
      })
    }
  }
}

/**
 * A feature from the corpus's copy of its metadata (`features/<path>`),
 * with `install` as its install.sh, published as `<path without the tag>:<tag>`.
 */
const publishCorpusFeature = (registry: TestRegistry, root: string, path: string, install: string) =>
  Effect.gen(function* () {
    const folder = join(root, path)
    mkdirSync(folder, { recursive: true })
    copyFileSync(join(corpus, "features", path, "devcontainer-feature.json"), join(folder, "devcontainer-feature.json"))
    writeFileSync(join(folder, "install.sh"), `#!/bin/sh\nset -e\n${install}\n`)
    const at = path.lastIndexOf("/")
    return yield* publishFeature(registry, { repository: path.slice(0, at), tag: path.slice(at + 1), folder })
  })

/** A registry with the stand-in images under their names (`repository:tag` → its user), and a folder for feature sources. */
const withCorpusRegistry = <A, E>(
  images: Readonly<Record<string, "vscode" | "node">>,
  body: (registry: TestRegistry, root: string) => Effect.Effect<A, E, Scope.Scope>
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      for (const [image, user] of Object.entries(images)) {
        const local = yield* Effect.tryPromise(() => ensureImage(standInImage(user)))
        const [repository = "", tag = ""] = image.split(":")
        yield* pushImage(registry, local, repository, tag)
      }
      const root = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-corpus-features-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      return yield* body(registry, root)
    })
  )

/**
 * Opens PR `pr` with `files` on an engine that may fetch from `registry`:
 * it must reach `running` with no setup error; `check` then looks at the
 * running container (before the engine's teardown removes it).
 */
const openCorpus = (
  registry: TestRegistry,
  pr: number,
  files: Parameters<typeof pushPullRequest>[2],
  check: (row: Sandbox, seen: ReturnType<typeof observe>) => void
) =>
  withEngine({ config: { image: healthzTag, localRegistries: [registry.host] } }, ({ remote }) =>
    Effect.gen(function* () {
      pushPullRequest(remote.path, pr, files)
      const row = yield* openSettled(remote.path, pr)
      assert.strictEqual(row.status, "running", row.error ?? "")
      assert.isNull(row.setupError)
      check(row, observe(row))
    })
  )

const inContainer = (containerId: string, script: string, user?: string): string =>
  execFileSync("docker", ["exec", ...(user === undefined ? [] : ["-u", user]), containerId, "sh", "-c", script], {
    encoding: "utf8"
  }).trim()

/** What a test asserts about the running container, read while it runs. */
const observe = (row: Sandbox) => {
  const id = row.containerId ?? ""
  const read = (path: string) => inContainer(id, `cat ${path} 2>/dev/null || echo missing`)
  const { HostConfig } = inspectContainer(id)
  return {
    read,
    exec: (script: string) => inContainer(id, script),
    capAdd: HostConfig.CapAdd ?? [],
    securityOpt: (HostConfig as { readonly SecurityOpt?: ReadonlyArray<string> | null }).SecurityOpt ?? []
  }
}

const ignoredProperties = (row: Sandbox) => (row.environment?.ignored ?? []).map((left) => left.property)

describe("corpus files opened end to end (stand-in images, features and scripts, built here)", () => {
  it.live(
    "064-0102-yang-bustub.jsonc: an image, runArgs that widen (left out), onCreateCommand as remoteUser vscode",
    () =>
      withCorpusRegistry({ "devcontainers/cpp:ubuntu-24.04": "vscode" }, (registry) =>
        Effect.gen(function* () {
          const files = {
            ".devcontainer/devcontainer.json": corpusFile("064-0102-yang-bustub.jsonc", registry),
            "build_support/packages.sh": { executable: `#!/bin/sh\necho "packages $* as $(id -un)" > /tmp/on-create\n` }
          }
          yield* openCorpus(registry, 1, files, (row, seen) => {
            assert.strictEqual(seen.read("/tmp/on-create"), "packages -y as vscode")
            // --cap-add=SYS_PTRACE, and --security-opt with its value.
            assert.includeMembers(ignoredProperties(row), ["runArgs[0]", "runArgs[1]"])
            assert.notInclude(seen.capAdd, "SYS_PTRACE")
            assert.notInclude(seen.securityOpt, "seccomp=unconfined")
          })
        })
      ),
    300_000
  )

  it.live(
    "057-00o-sh-gorelo-haloapi-relay.jsonc: an image with the node feature at the version the file asks, appPort left out, postCreateCommand npm ci",
    () =>
      withCorpusRegistry({ "devcontainers/base:ubuntu": "vscode" }, (registry, root) =>
        Effect.gen(function* () {
          // The feature's containerEnv puts /usr/local/share/nvm/current/bin on PATH: the stand-ins go there.
          yield* publishCorpusFeature(
            registry,
            root,
            "devcontainers/features/node/2",
            [
              "bin=/usr/local/share/nvm/current/bin",
              `mkdir -p "$bin"`,
              `printf '#!/bin/sh\\necho v%s\\n' "$VERSION" > "$bin/node"`,
              `printf '#!/bin/sh\\necho "npm $* as $(id -un)" > /tmp/npm-ran\\n' > "$bin/npm"`,
              `chmod 0755 "$bin/node" "$bin/npm"`
            ].join("\n")
          )
          const files = {
            ".devcontainer/devcontainer.json": corpusFile("057-00o-sh-gorelo-haloapi-relay.jsonc", registry)
          }
          yield* openCorpus(registry, 2, files, (row, seen) => {
            assert.strictEqual(seen.exec("node --version"), "v26.5.1")
            // The image's label names vscode as the remote user; the file names none.
            assert.strictEqual(seen.read("/tmp/npm-ran"), "npm ci as vscode")
            assert.include(ignoredProperties(row), "appPort")
            assert.strictEqual(row.environment?.features?.[0]?.key, `${registry.host}/devcontainers/features/node:2`)
          })
        })
      ),
    300_000
  )

  it.live(
    "011-00000111-property_info.jsonc: a Dockerfile outside .devcontainer with the repository as context, the git feature with its defaults, postCreateCommand as an object of argv",
    () =>
      withCorpusRegistry({}, (registry, root) =>
        Effect.gen(function* () {
          yield* publishCorpusFeature(
            registry,
            root,
            "devcontainers/features/git/1",
            `echo "git version=$VERSION ppa=$PPA" > /usr/local/share/git-feature`
          )
          const files = {
            ".devcontainer/devcontainer.json": corpusFile("011-00000111-property_info.jsonc", registry),
            // The context is the repository (".."): the build sees its files.
            "docker/dev/Dockerfile": `FROM ${DefaultImage.DEFAULT_IMAGE}\nCOPY requirements.txt /opt/requirements.txt\n`,
            "requirements.txt": "streamlit\n",
            ".devcontainer/setup.sh": `echo "setup with $(cat /usr/local/share/git-feature) and $(cat /opt/requirements.txt)" > /tmp/setup-ran\n`
          }
          yield* openCorpus(registry, 3, files, (_, seen) => {
            assert.strictEqual(seen.read("/tmp/setup-ran"), "setup with git version=os-provided ppa=true and streamlit")
          })
        })
      ),
    300_000
  )

  it.live(
    "089-15960331-boku-no-cato.jsonc: a Dockerfile whose FROM takes the file's build arg, postCreateCommand yarn install as remoteUser node",
    () =>
      withCorpusRegistry({ "vscode/devcontainers/javascript-node:0-14": "node" }, (registry) =>
        Effect.gen(function* () {
          const files = {
            ".devcontainer/devcontainer.json": corpusFile("089-15960331-boku-no-cato.jsonc", registry),
            // The file's VARIANT ("14") picks the base image, as the repository's Dockerfile does.
            ".devcontainer/Dockerfile": `ARG VARIANT=16\nFROM ${registry.host}/vscode/devcontainers/javascript-node:0-\${VARIANT}\n`
          }
          yield* openCorpus(registry, 4, files, (_, seen) => {
            assert.strictEqual(seen.read("/tmp/yarn-ran"), "yarn install as node")
          })
        })
      ),
    300_000
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  archiveFiles,
  type FeatureMetadata,
  featureBuild,
  lockFilePath,
  optionsEnvFile,
  optionValues,
  parseFeatureMetadata,
  parseLockFile,
  safeId
} from "../../src/index.ts"
import { tarOf } from "../support.ts"

const node: FeatureMetadata = {
  id: "node",
  version: "1.6.0",
  options: {
    version: { type: "string", default: "lts" },
    nodeGypDependencies: { type: "boolean", default: true },
    nvmInstallPath: { type: "string", default: "/usr/local/share/nvm" }
  },
  containerEnv: { NVM_DIR: "/usr/local/share/nvm", PATH: "${NVM_DIR}/current/bin:${PATH}" },
  customizations: { vscode: { extensions: ["dbaeumer.vscode-eslint"] } },
  postCreateCommand: "node --version"
}

describe("feature options (the spec's environment variables)", () => {
  it("safeId as the devcontainers CLI's getSafeId", () => {
    assert.strictEqual(safeId("option-name"), "OPTION_NAME")
    assert.strictEqual(safeId("1option-name-with-dashes-"), "_OPTION_NAME_WITH_DASHES_")
  })
  it("true takes the defaults; a string sets version; an object overrides", () => {
    assert.deepStrictEqual(optionValues(node, true), {
      version: "lts",
      nodeGypDependencies: true,
      nvmInstallPath: "/usr/local/share/nvm"
    })
    assert.strictEqual(optionValues(node, "18").version, "18")
    assert.deepStrictEqual(optionValues(node, { nodeGypDependencies: false, extra: "x" }), {
      version: "lts",
      nodeGypDependencies: false,
      nvmInstallPath: "/usr/local/share/nvm",
      extra: "x"
    })
  })
  it("a string for a feature without a version option sets nothing", () =>
    assert.deepStrictEqual(optionValues({ id: "x" }, "1"), {}))
  it("values are single-quoted, so the install's shell takes them literally", () =>
    assert.strictEqual(optionsEnvFile({ b: "it's $(id)", a: true }), `A='true'\nB='it'\\''s $(id)'\n`))
})

describe("featureBuild (the build that installs a feature set)", () => {
  const built = featureBuild({
    baseImage: "sha256:base",
    imageUser: "node",
    containerUser: "node",
    remoteUser: "node",
    baseLabel: JSON.stringify([{ remoteUser: "node" }]),
    features: [
      {
        key: "localhost:5000/f/node:1",
        metadata: node,
        values: optionValues(node, "20"),
        content: { _tag: "Archive" }
      },
      {
        key: "./hello",
        metadata: { id: "hello", containerEnv: { 'BAD"NAME': "x" } },
        values: {},
        content: { _tag: "Files", files: [{ path: "install.sh", text: "echo hi\n" }] }
      }
    ]
  })
  it("installs as root in order, env before each install, the image's user restored", () => {
    const lines = built.dockerfile.trim().split("\n")
    assert.strictEqual(lines[0], "FROM sha256:base")
    assert.strictEqual(lines[1], "USER root")
    const add = lines.indexOf("ADD archives/0.tar /tmp/dev-container-features/0/")
    const env = lines.indexOf('ENV PATH="${NVM_DIR}/current/bin:${PATH}"')
    const first = lines.findIndex((line) => line.startsWith("RUN cd /tmp/dev-container-features/0 "))
    const second = lines.findIndex((line) => line.startsWith("RUN cd /tmp/dev-container-features/1 "))
    assert.isTrue(env > 0 && add > env && first > add && second > first, built.dockerfile)
    assert.strictEqual(lines.at(-1), "USER node")
  })
  it("writes each feature's options, wrapper and local files; a bad containerEnv name is skipped with a warning", () => {
    const paths = built.files.map((file) => file.path)
    assert.includeMembers(paths, [
      "prbox-features/devcontainer-features.builtin.env",
      "prbox-features/0/devcontainer-features.env",
      "prbox-features/0/devcontainer-features-install.sh",
      "prbox-features/1/install.sh"
    ])
    assert.include(
      built.files.find((file) => file.path === "prbox-features/0/devcontainer-features.env")?.text,
      "VERSION='20'"
    )
    assert.deepStrictEqual(built.archives, [{ index: 0, path: "archives/0.tar" }])
    assert.isFalse(built.dockerfile.includes("BAD"))
    assert.strictEqual(built.warnings.length, 1)
  })
  it("records the base label's entries, then each feature's id and container properties", () => {
    const label = JSON.parse(built.label) as ReadonlyArray<Record<string, unknown>>
    assert.deepStrictEqual(label[0], { remoteUser: "node" })
    assert.deepStrictEqual(label[1], {
      id: "localhost:5000/f/node:1",
      customizations: { vscode: { extensions: ["dbaeumer.vscode-eslint"] } },
      postCreateCommand: "node --version"
    })
    assert.deepStrictEqual(label[2], { id: "./hello" })
  })
  it("a user name that is not plain installs for root", () => {
    const odd = featureBuild({
      baseImage: "b",
      imageUser: "",
      containerUser: "a b",
      remoteUser: "x;y",
      baseLabel: undefined,
      features: []
    })
    assert.include(odd.files[0]?.text, "_CONTAINER_USER=root\n_REMOTE_USER=root")
    assert.strictEqual(odd.dockerfile.trim().split("\n").at(-1), "USER root")
  })
})

describe("feature archives and metadata", () => {
  it("reads the files of a tar as `tar -C dir .` writes it", () => {
    const read = archiveFiles(tarOf({ "devcontainer-feature.json": '{"id":"x"}', "install.sh": "echo" }))
    assert.isTrue(read.ok)
    if (read.ok)
      assert.deepStrictEqual(
        read.files.map((file) => file.path),
        ["devcontainer-feature.json", "install.sh"]
      )
  })
  it("refuses what is not a tar", () => {
    assert.isFalse(archiveFiles(new TextEncoder().encode("not a tar")).ok)
    assert.isFalse(archiveFiles(tarOf({ a: "x".repeat(2000) }).subarray(0, 1024)).ok)
  })
  it.effect("metadata needs an id; other keys are the author's own", () =>
    Effect.gen(function* () {
      const ok = yield* parseFeatureMetadata("f", '{ "id": "x", "keywords": ["a"], // c\n }')
      assert.strictEqual(ok.id, "x")
      const error = yield* Effect.flip(parseFeatureMetadata("f", '{ "options": {} }'))
      assert.strictEqual(error.property, "id")
    })
  )
})

describe("devcontainer-lock.json", () => {
  it("sits beside devcontainer.json", () => {
    assert.strictEqual(lockFilePath(".devcontainer/devcontainer.json"), ".devcontainer/devcontainer-lock.json")
    assert.strictEqual(lockFilePath(".devcontainer.json"), ".devcontainer-lock.json")
  })
  it.effect("pins each key to its integrity; a malformed digest fails the read", () =>
    Effect.gen(function* () {
      const digest = `sha256:${"b".repeat(64)}`
      const pins = yield* parseLockFile(
        "l",
        JSON.stringify({
          features: { "r/f/node:1": { version: "1.6.0", resolved: `r/f/node@${digest}`, integrity: digest } }
        })
      )
      assert.deepStrictEqual(pins, { "r/f/node:1": digest })
      yield* Effect.flip(parseLockFile("l", JSON.stringify({ features: { x: { integrity: "md5:1" } } })))
    })
  )
})

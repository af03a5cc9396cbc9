import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkComposeFiles } from "../../src/index.ts"

// What Compose reads on the host while rendering, checked in the PR's Compose
// files before the engine renders them.

const first = ".devcontainer/docker-compose.yml"
const check = (text: string, trusted = false, more: ReadonlyArray<{ path: string; text: string }> = []) =>
  Effect.result(checkComposeFiles([{ path: first, text }, ...more], trusted))

// name, the Compose file, the property refused (undefined: it passes).
const rows: ReadonlyArray<readonly [string, string, string | undefined]> = [
  ["an env_file beside it", "services:\n  app:\n    env_file: .env\n", undefined],
  [
    "an env_file list, long form, inside",
    "services:\n  app:\n    env_file: [../.env, {path: ./x.env, required: false}]\n",
    undefined
  ],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Compose's own interpolation
  ["a variable with a default inside", "services:\n  app:\n    env_file: ${ENV:-.env}\n", undefined],
  ["an absolute env_file", "services:\n  app:\n    env_file: /etc/environment\n", "services.app.env_file[0]"],
  [
    "an env_file climbing out",
    "services:\n  db:\n    env_file: [.env, ../../../.ssh/env]\n",
    "services.db.env_file[1]"
  ],
  ["an env_file in the home", "services:\n  app:\n    env_file: {path: ~/.aws/env}\n", "services.app.env_file[0]"],
  [
    "a variable with an absolute default",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Compose's own interpolation
    "services:\n  app:\n    env_file: ${ENV:-/etc/passwd}\n",
    "services.app.env_file[0]"
  ],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Compose's own interpolation
  ["a required variable", "services:\n  app:\n    env_file: ${ENV:?set it}\n", "services.app.env_file[0]"],
  ["a label_file outside", "services:\n  app:\n    label_file: /etc/labels\n", "services.app.label_file[0]"],
  [
    "extends.file outside",
    "services:\n  app:\n    extends: {file: /srv/base.yml, service: b}\n",
    "services.app.extends.file"
  ],
  ["extends within the file", "services:\n  app:\n    extends: {service: b}\n  b:\n    image: x\n", undefined],
  ["include outside", "include:\n  - /srv/compose.yml\nservices: {}\n", "include[0]"],
  ["include inside", "include:\n  - path: ../compose.base.yml\nservices: {}\n", undefined],
  [
    "an env_file through a merge key",
    "x-env: &env\n  env_file: /etc/shadow\nservices:\n  app:\n    <<: *env\n    image: x\n",
    "services.app.env_file[0]"
  ]
]

describe("checkComposeFiles", () => {
  for (const [name, text, property] of rows) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* check(text)
        if (property === undefined) {
          assert.strictEqual(result._tag, "Success", result._tag === "Failure" ? result.failure.message : "")
          return
        }
        assert.strictEqual(result._tag === "Failure" ? result.failure.property : "passed", property)
        if (result._tag === "Failure") assert.strictEqual(result.failure.file, first)
        // A trusted repository's are honoured.
        assert.strictEqual((yield* check(text, true))._tag, "Success")
      })
    )
  }

  it.effect("a later file's paths are the first file's folder's too", () =>
    Effect.gen(function* () {
      const later = { path: "docker/compose.base.yml", text: "services:\n  db:\n    env_file: ../../.env\n" }
      const result = yield* check("services: {}\n", false, [later])
      assert.strictEqual(
        result._tag === "Failure" ? `${result.failure.file} ${result.failure.property}` : "passed",
        "docker/compose.base.yml services.db.env_file[0]"
      )
    })
  )

  it.effect("what rendering reads inside the repository is listed, repository-relative, for the engine to copy", () =>
    Effect.gen(function* () {
      const text = [
        "include: [{path: ../compose/more.yml}]",
        "services:",
        "  app:",
        "    env_file: [../config/dev.env, {path: ./local.env, required: false}]",
        "    label_file: labels",
        "    extends: {file: ../compose/base.yml, service: base}",
        "    build: {context: ../app, dockerfile: ../docker/Dockerfile}",
        "  db:",
        "    build: ../../../outside",
        "  web:",
        "    build: {context: 'https://example.invalid/repo.git'}",
        ""
      ].join("\n")
      const reads = yield* checkComposeFiles([{ path: first, text }], false)
      assert.deepStrictEqual(
        reads.map((read) => `${read.kind} ${read.path} ${read.property}`),
        [
          "compose compose/more.yml include[0]",
          "file config/dev.env services.app.env_file[0]",
          "file .devcontainer/local.env services.app.env_file[1]",
          "file .devcontainer/labels services.app.label_file[0]",
          "compose compose/base.yml services.app.extends.file",
          "folder app services.app.build.context"
        ]
      )
      // A trusted repository's paths outside are not refused, and not listed.
      const trusted = yield* checkComposeFiles(
        [{ path: first, text: "services:\n  app:\n    env_file: [/etc/environment, x.env]\n" }],
        true
      )
      assert.deepStrictEqual(
        trusted.map((read) => read.path),
        [".devcontainer/x.env"]
      )
      // Another folder's paths: an extended file's own.
      const nested = yield* checkComposeFiles(
        [{ path: "compose/base.yml", text: "services:\n  base:\n    env_file: base.env\n" }],
        false,
        "compose"
      )
      assert.deepStrictEqual(
        nested.map((read) => read.path),
        ["compose/base.env"]
      )
    })
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { composeIgnored, type DevcontainerSpec, readDevcontainer } from "../../src/index.ts"

// devcontainer.json's Docker Compose form, read as the devcontainers CLI reads it.

const file = ".devcontainer/devcontainer.json"

const read = (text: string, path = file) =>
  Effect.result(
    readDevcontainer({
      located: { path, text },
      host: "github.com",
      repository: "someone/fork",
      trustedRepositories: []
    })
  )

const accepted: ReadonlyArray<readonly [string, string, Partial<DevcontainerSpec>]> = [
  [
    "one file beside devcontainer.json, the defaults",
    '{ "dockerComposeFile": "docker-compose.yml", "service": "app" }',
    {
      source: {
        _tag: "Compose",
        files: [".devcontainer/docker-compose.yml"],
        service: "app",
        runServices: undefined,
        shutdownAction: "stopCompose"
      },
      workspaceFolder: "/"
    }
  ],
  [
    "several files in order, relative to the folder, runServices and shutdownAction",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: devcontainer.json's own variable
    '{ "dockerComposeFile": ["../docker-compose.yml", "./docker-compose.dev.yml"], "service": "web", "runServices": ["web", "db"], "shutdownAction": "none", "workspaceFolder": "/workspaces/${localWorkspaceFolderBasename}" }',
    {
      source: {
        _tag: "Compose",
        files: ["docker-compose.yml", ".devcontainer/docker-compose.dev.yml"],
        service: "web",
        runServices: ["web", "db"],
        shutdownAction: "none"
      },
      workspaceFolder: "/workspaces/fork"
    }
  ],
  [
    "stopContainer read as stopCompose",
    '{ "dockerComposeFile": "c.yml", "service": "app", "shutdownAction": "stopContainer", "workspaceFolder": "/" }',
    {
      source: {
        _tag: "Compose",
        files: [".devcontainer/c.yml"],
        service: "app",
        runServices: undefined,
        shutdownAction: "stopCompose"
      },
      workspaceFolder: "/"
    }
  ]
]

const refused: ReadonlyArray<readonly [string, string, string]> = [
  [
    "a file climbing out of the repository",
    '{ "dockerComposeFile": "../../compose.yml", "service": "app" }',
    `${file}: dockerComposeFile: must be a relative path to a file inside the repository`
  ],
  [
    "an absolute file among several",
    '{ "dockerComposeFile": ["compose.yml", "/etc/compose.yml"], "service": "app" }',
    `${file}: dockerComposeFile[1]: must be a relative path to a file inside the repository`
  ],
  ["no file", '{ "dockerComposeFile": [], "service": "app" }', `${file}: dockerComposeFile: names no Compose file`],
  [
    "no service",
    '{ "dockerComposeFile": "compose.yml" }',
    `${file}: service: missing: a Compose devcontainer names its service`
  ],
  [
    "a service without files",
    '{ "service": "app" }',
    `${file}: dockerComposeFile: missing: service and runServices need it`
  ],
  [
    "a service name Compose refuses",
    '{ "dockerComposeFile": "c.yml", "service": "../app" }',
    `${file}: service: is not a Compose service name`
  ],
  [
    "a runServices name Compose refuses",
    '{ "dockerComposeFile": "c.yml", "service": "app", "runServices": ["db", "a b"] }',
    `${file}: runServices[1]: is not a Compose service name`
  ]
]

describe("readDevcontainer reads a Docker Compose devcontainer.json", () => {
  for (const [name, text, expected] of accepted) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* read(text)
        assert.strictEqual(result._tag, "Success")
        if (result._tag !== "Success") return
        const spec = result.success
        for (const [key, value] of Object.entries(expected)) {
          assert.deepStrictEqual(spec[key as keyof DevcontainerSpec], value, key)
        }
      })
    )
  }

  it.effect("the keys Compose does not use are warned about, not left out or refused as widening", () =>
    Effect.gen(function* () {
      const result = yield* read(
        '{ "dockerComposeFile": "c.yml", "service": "app", "runArgs": ["--privileged"], "appPort": 3000, "image": "x" }'
      )
      assert.strictEqual(result._tag, "Success")
      if (result._tag !== "Success") return
      assert.deepStrictEqual(result.success.ignored, [])
      assert.deepStrictEqual(result.success.warnings, [
        `${file}: image is not used by a Docker Compose devcontainer`,
        `${file}: appPort is not used by a Docker Compose devcontainer`,
        `${file}: runArgs is not used by a Docker Compose devcontainer`
      ])
    })
  )

  it.effect("devcontainer.json's own widening is still left out (it applies to the service)", () =>
    Effect.gen(function* () {
      const result = yield* read('{ "dockerComposeFile": "c.yml", "service": "app", "privileged": true }')
      assert.strictEqual(result._tag, "Success")
      if (result._tag !== "Success") return
      assert.deepStrictEqual(
        result.success.ignored.map((one) => one.property),
        ["privileged"]
      )
    })
  )
})

describe("readDevcontainer refuses a Docker Compose devcontainer.json", () => {
  for (const [name, text, message] of refused) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* read(text)
        assert.strictEqual(result._tag, "Failure")
        if (result._tag === "Failure") assert.strictEqual(result.failure.message, message)
      })
    )
  }
})

describe("composeIgnored", () => {
  const source = (shutdownAction: "none" | "stopCompose") =>
    ({ _tag: "Compose", files: ["c.yml"], service: "app", runServices: undefined, shutdownAction }) as const
  it("shutdownAction none is read and listed as left out: prbox's stops stop the whole project", () => {
    assert.deepStrictEqual(composeIgnored(source("none")), [
      { property: "shutdownAction", detail: "none: prbox stops the whole project on stop and idle" }
    ])
  })
  it("stopCompose (the default) is what prbox does: nothing listed", () => {
    assert.deepStrictEqual(composeIgnored(source("stopCompose")), [])
  })
})

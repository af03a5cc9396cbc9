import { assert, describe, it } from "@effect/vitest"
import type { EnvironmentPlan } from "@prbox/domain"
import { Effect } from "effect"
import { type ImageFacts, mergeOptions, planEnvironment, planOptions, readDevcontainer } from "../src/index.ts"

// How the container runs, as VS Code reads devcontainer.json and the image's
// label: overrideCommand, init, updateRemoteUserUID, userEnvProbe, waitFor,
// containerUser, hostRequirements.gpu; merged as the CLI's mergeConfiguration.

const file = ".devcontainer/devcontainer.json"

const plan = (text: string, facts: Partial<ImageFacts> = {}, devcontainerId?: string) =>
  Effect.gen(function* () {
    const spec = yield* readDevcontainer({
      located: { path: file, text },
      host: "github.com",
      repository: "acme/api",
      trustedRepositories: []
    })
    return planEnvironment(
      spec,
      "img",
      { metadataLabel: undefined, user: "", env: {}, ...facts },
      {},
      8,
      16_384,
      [],
      devcontainerId
    )
  })

type Options = Pick<EnvironmentPlan, "imageCommand" | "init" | "userEnvProbe" | "waitFor">

const rows: ReadonlyArray<{
  readonly name: string
  readonly text: string
  readonly facts?: Partial<ImageFacts>
  readonly options: Options
  readonly mapUser: string | null
  readonly warnings?: ReadonlyArray<string>
}> = [
  {
    name: "the defaults: code-server is the main process, a login interactive probe, ready after updateContentCommand",
    text: '{ "image": "x" }',
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: null
  },
  {
    name: "Docker Compose: overrideCommand defaults to false (the spec's default for Compose)",
    text: '{ "dockerComposeFile": "c.yml", "service": "app" }',
    facts: { entrypoint: ["/entry.sh"], cmd: ["serve"] },
    options: {
      imageCommand: ["/entry.sh", "serve"],
      init: false,
      userEnvProbe: "loginInteractiveShell",
      waitFor: "updateContentCommand"
    },
    mapUser: null
  },
  {
    name: "Docker Compose with overrideCommand true",
    text: '{ "dockerComposeFile": "c.yml", "service": "app", "overrideCommand": true }',
    facts: { entrypoint: ["/entry.sh"], cmd: ["serve"] },
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: null
  },
  {
    name: "overrideCommand false: the image's ENTRYPOINT then CMD, without init unless asked",
    text: '{ "image": "x", "overrideCommand": false }',
    facts: { entrypoint: ["/docker-entrypoint.sh"], cmd: ["nginx", "-g", "daemon off;"] },
    options: {
      imageCommand: ["/docker-entrypoint.sh", "nginx", "-g", "daemon off;"],
      init: false,
      userEnvProbe: "loginInteractiveShell",
      waitFor: "updateContentCommand"
    },
    mapUser: null
  },
  {
    name: "overrideCommand false with init, an image with neither ENTRYPOINT nor CMD",
    text: '{ "image": "x", "overrideCommand": false, "init": true }',
    options: { imageCommand: [], init: true, userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: null
  },
  {
    name: "userEnvProbe none and waitFor postCreateCommand",
    text: '{ "image": "x", "userEnvProbe": "none", "waitFor": "postCreateCommand" }',
    options: { waitFor: "postCreateCommand" },
    mapUser: null
  },
  {
    name: "the image's non-root user is mapped to the workspace owner's uid",
    text: '{ "image": "x" }',
    facts: { user: "dev" },
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: "dev"
  },
  {
    name: "containerUser alone is the remote user, and is mapped",
    text: '{ "image": "x", "containerUser": "ops" }',
    facts: { user: "dev" },
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: "ops"
  },
  {
    name: "a containerUser beside a remoteUser: one user runs everything",
    text: '{ "image": "x", "containerUser": "ops", "remoteUser": "dev" }',
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: "dev",
    warnings: [
      `${file}: containerUser is not a second user here: the container's processes run as the remote user (the workspace owner)`
    ]
  },
  {
    name: "updateRemoteUserUID false keeps the image's uid, and says what that means",
    text: '{ "image": "x", "remoteUser": "dev", "updateRemoteUserUID": false }',
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: null,
    warnings: [
      "updateRemoteUserUID: false: dev keeps the image's uid; the sandbox still runs as the workspace owner's uid, which is not dev's"
    ]
  },
  {
    name: "a numeric user or root is never mapped",
    text: '{ "image": "x", "remoteUser": "1000" }',
    facts: { user: "root" },
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: null
  },
  {
    name: "the image label's options count, devcontainer.json's last",
    text: '{ "image": "x", "waitFor": "onCreateCommand" }',
    facts: {
      user: "dev",
      metadataLabel: JSON.stringify([
        { overrideCommand: false, init: true, updateRemoteUserUID: false, waitFor: "postStartCommand" },
        { userEnvProbe: "loginShell" }
      ])
    },
    options: { imageCommand: [], init: true, userEnvProbe: "loginShell", waitFor: "onCreateCommand" },
    mapUser: null,
    warnings: [
      "updateRemoteUserUID: false: dev keeps the image's uid; the sandbox still runs as the workspace owner's uid, which is not dev's"
    ]
  },
  {
    name: "hostRequirements.gpu is a warning, never a failure",
    text: '{ "image": "x", "hostRequirements": { "gpu": true } }',
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: null,
    warnings: [
      "hostRequirements.gpu: prbox gives a sandbox no GPU; it runs without one, and what needs a GPU will not find it"
    ]
  },
  {
    name: "hostRequirements.gpu optional",
    text: '{ "image": "x", "hostRequirements": { "gpu": "optional" } }',
    options: { userEnvProbe: "loginInteractiveShell", waitFor: "updateContentCommand" },
    mapUser: null,
    warnings: ["hostRequirements.gpu: prbox gives a sandbox no GPU; it runs without one, as the configuration allows"]
  }
]

describe("how the container runs", () => {
  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function* () {
        const planned = yield* plan(row.text, row.facts)
        const { imageCommand, init, userEnvProbe, waitFor } = planned.plan
        const options = Object.fromEntries(
          Object.entries({ imageCommand, init, userEnvProbe, waitFor }).filter(([, value]) => value !== undefined)
        )
        assert.deepStrictEqual(options, row.options)
        assert.strictEqual(planned.mapUser, row.mapUser)
        assert.deepStrictEqual(planned.warnings, row.warnings ?? [])
      })
    )
  }

  it("root (a trusted repository's, by name or uid) and numeric users are never mapped; a named one is", () => {
    const none = mergeOptions([])
    for (const user of ["root", "0", "root:root", "1000", "dev:dev"])
      assert.isNull(planOptions(none, user, {}).mapUser, user)
    assert.strictEqual(planOptions(none, "dev", {}).mapUser, "dev")
  })

  it("mergeOptions: the last set wins, init if any asks, gpu required once any requires it", () => {
    const merged = mergeOptions([
      { overrideCommand: false, init: true, hostRequirements: { gpu: "optional" } },
      { overrideCommand: true, updateRemoteUserUID: true, hostRequirements: { gpu: { cores: 2 } } },
      { init: false, hostRequirements: { gpu: "optional" } }
    ])
    assert.deepStrictEqual(merged, {
      overrideCommand: true,
      init: true,
      updateRemoteUserUID: true,
      userEnvProbe: undefined,
      waitFor: undefined,
      gpu: "required"
    })
  })

  it.effect(`\${devcontainerId} is the sandbox's in containerEnv, remoteEnv and lifecycle commands`, () =>
    Effect.gen(function* () {
      const id = "1".repeat(52)
      const planned = yield* plan(
        `{ "image": "x", "containerEnv": { "C": "\${devcontainerId}" }, "remoteEnv": { "R": "r-\${devcontainerId}" }, "postCreateCommand": "echo \${devcontainerId}" }`,
        {},
        id
      )
      assert.strictEqual(planned.plan.containerEnv.C, id)
      assert.strictEqual(planned.plan.remoteEnv.R, `r-${id}`)
      assert.deepStrictEqual(planned.plan.steps[0]?.command, { _tag: "Shell", command: `echo ${id}` })
      assert.deepStrictEqual(planned.warnings, [])
    })
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type DevcontainerSource, noWidening, readDevcontainer, type Widening } from "../src/index.ts"

const file = ".devcontainer/devcontainer.json"
const repository = "acme/api"
const trustedRepositories = ["github.com/acme/*"]

interface ReadOptions {
  readonly path?: string
  readonly trusted?: boolean
  readonly untrustedWidening?: "omit" | "refuse"
  readonly withheld?: string
}

const read = (text: string, options: ReadOptions = {}) =>
  Effect.result(
    readDevcontainer({
      located: { path: options.path ?? file, text },
      host: "github.com",
      repository: options.trusted === true ? repository : "someone/fork",
      trustedRepositories,
      ...(options.untrustedWidening === undefined ? {} : { untrustedWidening: options.untrustedWidening }),
      ...(options.withheld === undefined ? {} : { withheld: options.withheld })
    })
  )

const refusal = (property: string, what: string) =>
  `${file}: ${property}: refused: it ${what}, and the repository's content is untrusted; to allow it, add "github.com/someone/fork" to trustedRepositories in your config.json`

// Text of the file, the error message expected.
const bad: ReadonlyArray<readonly [string, string, string]> = [
  [
    "text no object can be recovered from",
    "npm ci",
    `${file}: expected a JSON object; invalid JSON at 1:1: InvalidSymbol`
  ],
  ["not an object", '["node:22"]', `${file}: expected a JSON object`],
  [
    "an unknown property beside a value of the wrong type: the type still fails",
    '{ "image": "node:22", "imagee": "x", "forwardPorts": [true] }',
    `${file}: forwardPorts[0]: expected a port number or "host:port"`
  ],
  [
    "a build arg that is not a string",
    '{ "build": { "dockerfile": "Dockerfile", "args": { "NODE_VERSION": 22 } } }',
    `${file}: build.args.NODE_VERSION: expected a string`
  ],
  [
    "forwardPorts of the wrong type",
    '{ "image": "x", "forwardPorts": [true] }',
    `${file}: forwardPorts[0]: expected a port number or "host:port"`
  ],
  [
    "a lifecycle command of the wrong type",
    '{ "image": "x", "postCreateCommand": 3 }',
    `${file}: postCreateCommand: expected a string, a non-empty array of strings or an object of named commands`
  ],
  [
    "an empty command array",
    '{ "image": "x", "onCreateCommand": [] }',
    `${file}: onCreateCommand: expected a non-empty array of strings`
  ],
  [
    "an object command entry of the wrong type",
    '{ "image": "x", "postStartCommand": { "db": 1 } }',
    `${file}: postStartCommand.db: expected a string or a non-empty array of strings`
  ],
  [
    "a bad memory size",
    '{ "image": "x", "hostRequirements": { "memory": "lots" } }',
    `${file}: hostRequirements.memory: expected a size such as "4gb" or "512mb"`
  ],
  [
    "a Compose file outside the repository",
    '{ "dockerComposeFile": "../../../compose.yml", "service": "app" }',
    `${file}: dockerComposeFile: must be a relative path to a file inside the repository`
  ],
  [
    "neither image nor build",
    '{ "name": "empty", "postCreateCommand": "make" }',
    `${file}: neither image nor build.dockerfile is set: prbox needs one to make the container`
  ],
  [
    "both image and build",
    '{ "image": "x", "build": { "dockerfile": "Dockerfile" } }',
    `${file}: image: set either image or build, not both`
  ],
  [
    "a build without a Dockerfile",
    '{ "build": { "context": ".." } }',
    `${file}: build.dockerfile: missing: a build needs a Dockerfile`
  ],
  [
    "a context escaping the repository",
    '{ "build": { "dockerfile": "Dockerfile", "context": "../.." } }',
    `${file}: build.context: must be a relative path inside the repository`
  ],
  [
    "an absolute context",
    '{ "build": { "dockerfile": "Dockerfile", "context": "/etc" } }',
    `${file}: build.context: must be a relative path inside the repository`
  ],
  [
    "a legacy context escaping",
    '{ "dockerFile": "Dockerfile", "context": "../../x" }',
    `${file}: context: must be a relative path inside the repository`
  ],
  [
    "a Dockerfile escaping the repository",
    '{ "build": { "dockerfile": "../../etc/passwd" } }',
    `${file}: build.dockerfile: must be a relative path inside the repository`
  ],
  [
    "a relative workspaceFolder",
    '{ "image": "x", "workspaceFolder": "src" }',
    `${file}: workspaceFolder: must be an absolute path below / in the container`
  ],
  [
    "a workspaceFolder of /",
    '{ "image": "x", "workspaceFolder": "/" }',
    `${file}: workspaceFolder: must be an absolute path below / in the container`
  ]
]

// With config.json's "untrustedWidening": "refuse", the widening is refused as it always was.
const refusedWidening: ReadonlyArray<readonly [string, string, string]> = [
  ["runArgs", '{ "image": "x", "runArgs": ["--network=host"] }', refusal("runArgs", "widens the container")],
  ["privileged", '{ "image": "x", "privileged": true }', refusal("privileged", "widens the container")],
  ["capAdd", '{ "image": "x", "capAdd": ["SYS_PTRACE"] }', refusal("capAdd", "widens the container")],
  [
    "securityOpt",
    '{ "image": "x", "securityOpt": ["seccomp=unconfined"] }',
    refusal("securityOpt", "widens the container")
  ],
  [
    "mounts",
    `{ "image": "x", "mounts": ["source=\${localEnv:HOME}/.ssh,target=/root/.ssh,type=bind"] }`,
    refusal("mounts[0]", "mounts storage from the host")
  ],
  [
    "a Docker socket mount",
    '{ "image": "x", "mounts": [{ "type": "bind", "source": "/var/run/docker.sock", "target": "/var/run/docker.sock" }] }',
    refusal("mounts[0]", "mounts the Docker socket")
  ],
  [
    "a Docker socket in runArgs",
    '{ "image": "x", "runArgs": ["-v", "/var/run/docker.sock:/var/run/docker.sock"] }',
    refusal("runArgs", "mounts the Docker socket")
  ],
  [
    "workspaceMount",
    '{ "image": "x", "workspaceMount": "source=/,target=/workspace,type=bind" }',
    refusal("workspaceMount", "mounts storage from the host")
  ],
  ["appPort", '{ "image": "x", "appPort": 3000 }', refusal("appPort", "publishes a port on the host")],
  [
    "build.options",
    '{ "build": { "dockerfile": "Dockerfile", "options": ["--network=host"] } }',
    refusal("build.options", "reaches the host")
  ]
]

describe("readDevcontainer refuses", () => {
  for (const [name, text, message] of bad) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* read(text)
        assert.strictEqual(result._tag, "Failure")
        if (result._tag === "Failure") assert.strictEqual(result.failure.message, message)
      })
    )
  }
  for (const [name, text, message] of refusedWidening) {
    it.effect(`${name}, with untrustedWidening "refuse"`, () =>
      Effect.gen(function* () {
        const result = yield* read(text, { untrustedWidening: "refuse" })
        assert.strictEqual(result._tag, "Failure")
        if (result._tag === "Failure") assert.strictEqual(result.failure.message, message)
        // The same file opens without it by default (the "omit" of config.json).
        const omitted = yield* read(text)
        assert.strictEqual(omitted._tag, "Success", omitted._tag === "Failure" ? omitted.failure.message : "")
      })
    )
  }
  it.effect("errors never echo the file's values", () =>
    Effect.gen(function* () {
      const result = yield* read('{ "image": "x", "containerEnv": { "TOKEN": 12345678 } }')
      assert.strictEqual(result._tag, "Failure")
      if (result._tag === "Failure") {
        assert.strictEqual(result.failure.message, `${file}: containerEnv.TOKEN: expected a string`)
        assert.notInclude(JSON.stringify(result.failure), "12345678")
      }
    })
  )
})

const widening = `{
  "image": "x",
  "runArgs": ["--network=host"],
  "privileged": true,
  "capAdd": ["SYS_PTRACE"],
  "securityOpt": ["seccomp=unconfined"],
  "mounts": ["source=/var/run/docker.sock,target=/var/run/docker.sock,type=bind", { "type": "volume", "source": "cache", "target": "/cache" }],
  "workspaceMount": "source=/src,target=/workspace,type=bind",
  "appPort": [3000, "8080:80"],
}`

describe("readDevcontainer for a trusted repository", () => {
  it.effect("accepts the widening properties and hands them over as data", () =>
    Effect.gen(function* () {
      const result = yield* read(widening, { trusted: true })
      assert.strictEqual(result._tag, "Success")
      if (result._tag !== "Success") return
      assert.isTrue(result.success.trusted)
      assert.deepStrictEqual(result.success.widening, {
        runArgs: ["--network=host"],
        capAdd: ["SYS_PTRACE"],
        securityOpt: ["seccomp=unconfined"],
        privileged: true,
        mounts: [{ type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock", readOnly: false }],
        workspaceMount: "source=/src,target=/workspace,type=bind",
        appPort: [3000, "8080:80"],
        buildOptions: []
      } satisfies Widening)
      assert.deepStrictEqual(result.success.ignored, [])
      assert.isNull(result.success.withheld)
      // A named volume widens nothing: the sandbox's own, for every repository.
      assert.deepStrictEqual(result.success.options.volumes, [
        { property: "mounts[1]", source: "cache", target: "/cache", readOnly: false }
      ])
    })
  )
  it.effect('the same file from an untrusted repository is refused under untrustedWidening "refuse"', () =>
    Effect.gen(function* () {
      const result = yield* read(widening, { untrustedWidening: "refuse" })
      assert.strictEqual(result._tag, "Failure")
      if (result._tag === "Failure")
        assert.strictEqual(result.failure.message, refusal("runArgs", "widens the container"))
    })
  )
  it.effect("build.options is handed over too", () =>
    Effect.gen(function* () {
      const result = yield* read('{ "build": { "dockerfile": "Dockerfile", "options": ["--add-host=x:1.2.3.4"] } }', {
        trusted: true
      })
      assert.strictEqual(result._tag, "Success")
      if (result._tag === "Success")
        assert.deepStrictEqual(result.success.widening.buildOptions, ["--add-host=x:1.2.3.4"])
    })
  )
})

// path, text, source, warnings
const good: ReadonlyArray<readonly [string, string, string, DevcontainerSource, ReadonlyArray<string>]> = [
  [
    "an image",
    file,
    '{ "image": "images.example/devcontainers/typescript-node:22" }',
    { _tag: "Image", image: "images.example/devcontainers/typescript-node:22" },
    []
  ],
  [
    "a Dockerfile next to the file, the repository as context",
    file,
    '{ "build": { "dockerfile": "Dockerfile", "context": "..", "args": { "VARIANT": "3.12" }, "target": "dev" } }',
    { _tag: "Build", dockerfile: ".devcontainer/Dockerfile", context: ".", args: { VARIANT: "3.12" }, target: "dev" },
    []
  ],
  [
    "the default context is the Dockerfile's folder, as the CLI's",
    file,
    '{ "build": { "dockerfile": "docker/Dockerfile" } }',
    { _tag: "Build", dockerfile: ".devcontainer/docker/Dockerfile", context: ".devcontainer/docker", args: {} },
    []
  ],
  [
    "the legacy dockerFile at the root",
    ".devcontainer.json",
    '{ "dockerFile": "Dockerfile.dev" }',
    { _tag: "Build", dockerfile: "Dockerfile.dev", context: ".", args: {} },
    []
  ],
  [
    "the legacy dockerFile with its context, in .devcontainer",
    file,
    '{ "dockerFile": "Dockerfile", "context": ".." }',
    { _tag: "Build", dockerfile: ".devcontainer/Dockerfile", context: ".", args: {} },
    []
  ],
  [
    "the legacy dockerFile above .devcontainer: the context is its folder",
    file,
    '{ "dockerFile": "../docker/Dockerfile" }',
    { _tag: "Build", dockerfile: "docker/Dockerfile", context: "docker", args: {} },
    []
  ],
  [
    "the legacy keys win over build's, as the CLI reads them; build's args still count",
    file,
    '{ "dockerFile": "Dockerfile.dev", "context": "..", "build": { "dockerfile": "Other", "context": "x", "args": { "A": "1" } } }',
    { _tag: "Build", dockerfile: ".devcontainer/Dockerfile.dev", context: ".", args: { A: "1" } },
    []
  ],
  [
    "an empty context is the Dockerfile's folder",
    file,
    '{ "build": { "dockerfile": "Dockerfile", "context": "" } }',
    { _tag: "Build", dockerfile: ".devcontainer/Dockerfile", context: ".devcontainer", args: {} },
    []
  ],
  [
    "a named config's paths",
    ".devcontainer/python/devcontainer.json",
    '{ "build": { "dockerfile": "../Dockerfile", "context": "../.." } }',
    { _tag: "Build", dockerfile: ".devcontainer/Dockerfile", context: ".", args: {} },
    []
  ],
  [
    "build args never read the host's environment",
    file,
    `{ "build": { "dockerfile": "Dockerfile", "args": { "USER_UID": "\${localEnv:UID:1000}", "PROXY": "\${localEnv:HTTP_PROXY}" } } }`,
    {
      _tag: "Build",
      dockerfile: ".devcontainer/Dockerfile",
      context: ".devcontainer",
      args: { USER_UID: "1000", PROXY: "" }
    },
    [
      `build.args.USER_UID: \${localEnv:…} is not read from the host (PR content must not read your environment); using its default`,
      `build.args.PROXY: \${localEnv:…} is not read from the host (PR content must not read your environment); using an empty value`
    ]
  ],
  [
    "what prbox skips, with warnings",
    file,
    `{ "image": "x", "initializeCommand": "docker pull x", "features": { "images.example/devcontainers/features/node:1": {} },
       "postAttachCommand": "echo hi", "overrideCommand": false, "waitFor": "postCreateCommand", "shutdownAction": "none", "userEnvProbe": "loginShell" }`,
    { _tag: "Image", image: "x" },
    [
      "initializeCommand runs on the host; prbox never runs it",
      "postAttachCommand is not run: prbox has no attach step"
    ]
  ],
  [
    "an unknown property: a warning naming it, ignored as VS Code ignores it",
    file,
    '{ "image": "node:22", "imagee": "x" }',
    { _tag: "Image", image: "node:22" },
    [`${file}: imagee: unknown property, ignored (as VS Code ignores it)`]
  ],
  [
    "unknown nested properties, each named",
    file,
    '{ "build": { "dockerfile": "D", "arg": {} }, "hostRequirements": { "cpus": 2, "disk": "1gb" }, "env": { "A": "1" } }',
    { _tag: "Build", dockerfile: ".devcontainer/D", context: ".devcontainer", args: {} },
    [
      `${file}: env: unknown property, ignored (as VS Code ignores it)`,
      `${file}: build.arg: unknown property, ignored (as VS Code ignores it)`,
      `${file}: hostRequirements.disk: unknown property, ignored (as VS Code ignores it)`
    ]
  ]
]

describe("readDevcontainer accepts", () => {
  for (const [name, path, text, source, warnings] of good) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* read(text, { path })
        assert.strictEqual(result._tag, "Success")
        if (result._tag !== "Success") return
        assert.deepStrictEqual(result.success.source, source)
        assert.deepStrictEqual(result.success.warnings, warnings)
        assert.isFalse(result.success.trusted)
        assert.deepStrictEqual(result.success.widening, noWidening)
      })
    )
  }
})

const hint =
  'the repository is not trusted: adding "github.com/someone/fork" to trustedRepositories in your config.json honours it'

const everyWidening = `{
  "build": { "dockerfile": "Dockerfile", "options": ["--network=host", "--build-arg", "V=1"] },
  "runArgs": ["--init", "--privileged", "--add-host", "host.docker.internal:host-gateway", "--name", "web", "-e", "MODE=dev"],
  "privileged": true,
  "capAdd": ["SYS_ADMIN"],
  "securityOpt": ["no-new-privileges", "seccomp=unconfined"],
  "mounts": ["source=/etc,target=/host-etc,type=bind", { "type": "volume", "source": "nm", "target": "/w/node_modules" }],
  "workspaceMount": "source=/,target=/workspace,type=bind",
  "appPort": 3000
}`

describe("readDevcontainer opens an untrusted repository without its widening", () => {
  it.effect("each widening setting is listed with what it does and the trustedRepositories entry that honours it", () =>
    Effect.gen(function* () {
      const result = yield* read(everyWidening)
      assert.strictEqual(result._tag, "Success", result._tag === "Failure" ? result.failure.message : "")
      if (result._tag !== "Success") return
      const spec = result.success
      assert.isFalse(spec.trusted)
      assert.deepStrictEqual(spec.widening, noWidening)
      const expected = [
        ["runArgs[1]", "--privileged widens the container"],
        ["runArgs[2]", "--add-host points a name at this machine (the host's gateway)"],
        ["privileged", "widens the container"],
        ["capAdd", "widens the container"],
        ["securityOpt", "widens the container"],
        ["mounts[0]", "mounts storage from the host"],
        ["workspaceMount", "mounts storage from the host"],
        ["appPort", "publishes a port on the host"],
        ["build.options[0]", "--network reaches the host"]
      ].map(([property, what]) => ({ property: property ?? "", detail: `${what}; ${hint}` }))
      assert.deepStrictEqual(spec.ignored, expected)
      for (const { property, detail } of expected) {
        assert.include(spec.warnings, `${file}: ${property} is left out: ${detail}`)
      }
      // What widens nothing is honoured for every repository, or ignored with a line.
      assert.include(spec.warnings, `${file}: runArgs[4]: --name is ignored: prbox names its containers itself`)
      assert.deepStrictEqual(spec.options.env, { MODE: "dev" })
      assert.deepStrictEqual(spec.options.securityOpt, ["no-new-privileges"])
      assert.deepStrictEqual(spec.options.volumes, [
        { property: "mounts[1]", source: "nm", target: "/w/node_modules", readOnly: false }
      ])
      assert.deepStrictEqual(spec.source._tag === "Build" ? spec.source.args : {}, { V: "1" })
      assert.strictEqual(spec.withheld, hint)
    })
  )

  it.effect("flags that widen nothing open with nothing left out", () =>
    Effect.gen(function* () {
      const result = yield* read(
        '{ "image": "x", "runArgs": ["--init", "--hostname=review", "--add-host", "api.local:10.0.0.5", "--security-opt=no-new-privileges", "--cpus", "2", "--memory=1g", "--shm-size", "256m"] }'
      )
      assert.strictEqual(result._tag, "Success")
      if (result._tag !== "Success") return
      assert.deepStrictEqual(result.success.ignored, [])
      assert.deepStrictEqual(result.success.warnings, [])
      assert.deepStrictEqual(result.success.options, {
        env: {},
        hostname: "review",
        extraHosts: ["api.local:10.0.0.5"],
        securityOpt: ["no-new-privileges"],
        cpus: 2,
        memoryMb: 1024,
        shmSizeMb: 256,
        volumes: [],
        buildArgs: {}
      })
    })
  )

  it.effect(
    "a trusted repository whose widening is withheld (a PR changing it) is told it applies once on the base branch",
    () =>
      Effect.gen(function* () {
        const why = "it is new in this PR: honoured once it is on the base branch"
        const result = yield* read('{ "image": "x", "capAdd": ["SYS_PTRACE"], "remoteUser": "root" }', {
          trusted: true,
          withheld: why
        })
        assert.strictEqual(result._tag, "Success")
        if (result._tag !== "Success") return
        assert.isFalse(result.success.trusted)
        assert.deepStrictEqual(result.success.widening, noWidening)
        assert.deepStrictEqual(result.success.ignored, [{ property: "capAdd", detail: `widens the container; ${why}` }])
      })
  )
})

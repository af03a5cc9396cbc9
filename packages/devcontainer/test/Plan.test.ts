import { assert, describe, it } from "@effect/vitest"
import type { LifecycleCommand, LifecycleHook, LifecycleStep } from "@prbox/domain"
import { Effect } from "effect"
import { type ImageFacts, type Limits, planEnvironment, readDevcontainer, type Widening } from "../src/index.ts"

// devcontainer.json files shaped like real repositories', each with the plan
// prbox must derive from it and its image. The engine's tests check the same
// inside running containers; these check the decisions.

const file = ".devcontainer/devcontainer.json"
const label = "image metadata"
const shell = (hook: LifecycleHook, command: string, origin = file): LifecycleStep => ({
  hook,
  command: { _tag: "Shell", command },
  origin
})
const exec = (hook: LifecycleHook, argv: ReadonlyArray<string>, origin = file): LifecycleStep => ({
  hook,
  command: { _tag: "Exec", argv },
  origin
})
const parallel = (
  hook: LifecycleHook,
  entries: Record<string, LifecycleCommand & { _tag: "Shell" | "Exec" }>
): LifecycleStep => ({
  hook,
  command: { _tag: "Parallel", entries: Object.entries(entries).map(([name, command]) => ({ name, command })) },
  origin: file
})

interface Expected {
  readonly containerEnv: Record<string, string>
  readonly remoteEnv: Record<string, string>
  readonly remoteUser: string | null
  readonly workspaceFolder: string
  readonly steps: ReadonlyArray<LifecycleStep>
  readonly cpus: number | null
  readonly memoryMb: number | null
  readonly extensions: ReadonlyArray<string>
  readonly forwardPorts: ReadonlyArray<number | string>
  readonly warnings: ReadonlyArray<string>
  readonly runAsRoot: boolean
}

interface Row {
  readonly name: string
  readonly text: string
  readonly facts?: Partial<ImageFacts>
  readonly limits?: Limits
  readonly host?: { readonly cpus: number; readonly memoryMb: number }
  readonly trusted?: boolean
  readonly expected: Partial<Expected>
}

const defaults: Expected = {
  containerEnv: {},
  remoteEnv: {},
  remoteUser: null,
  workspaceFolder: "/workspaces/api",
  steps: [],
  cpus: null,
  memoryMb: null,
  extensions: [],
  forwardPorts: [],
  warnings: [],
  runAsRoot: false
}

const rows: ReadonlyArray<Row> = [
  {
    name: "a Node repository: image, npm ci, remoteUser node, the image's features label",
    text: `{
      "name": "Node.js & TypeScript",
      "image": "images.example/devcontainers/typescript-node:1-22-bookworm",
      "forwardPorts": [3000],
      "postCreateCommand": "npm ci",
      "customizations": { "vscode": { "extensions": ["dbaeumer.vscode-eslint", "esbenp.prettier-vscode"] } },
      "remoteUser": "node"
    }`,
    facts: {
      metadataLabel: JSON.stringify([
        { id: "images.example/devcontainers/features/common-utils:2" },
        {
          id: "images.example/devcontainers/features/node:1",
          customizations: { vscode: { extensions: ["dbaeumer.vscode-eslint"] } }
        },
        { remoteUser: "node" }
      ])
    },
    expected: {
      remoteUser: "node",
      forwardPorts: [3000],
      steps: [shell("postCreateCommand", "npm ci")],
      extensions: ["dbaeumer.vscode-eslint", "esbenp.prettier-vscode"]
    }
  },
  {
    name: "a Python repository: build with args and target, array onCreateCommand, PATH from the image",
    text: `{
      "build": { "dockerfile": "Dockerfile", "context": "..", "args": { "PYTHON_VERSION": "3.12" }, "target": "dev" },
      "containerEnv": { "PYTHONUNBUFFERED": "1", "PIP_CACHE_DIR": "\${containerWorkspaceFolder}/.cache/pip" },
      "remoteEnv": { "PATH": "\${containerEnv:PATH}:/home/vscode/.local/bin" },
      "workspaceFolder": "/workspace",
      "onCreateCommand": ["pip", "install", "-e", ".[dev]"],
      "postCreateCommand": "pre-commit install",
      "remoteUser": "vscode"
    }`,
    facts: { env: { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" } },
    expected: {
      containerEnv: { PYTHONUNBUFFERED: "1", PIP_CACHE_DIR: "/workspace/.cache/pip" },
      remoteEnv: { PATH: "/usr/local/bin:/usr/bin:/bin:/home/vscode/.local/bin" },
      remoteUser: "vscode",
      workspaceFolder: "/workspace",
      steps: [
        exec("onCreateCommand", ["pip", "install", "-e", ".[dev]"]),
        shell("postCreateCommand", "pre-commit install")
      ]
    }
  },
  {
    name: "object-form postStartCommand: entries in parallel, each in its form",
    text: `{
      "image": "images.example/acme/rails-dev:3.3",
      "postCreateCommand": "bin/setup",
      "postStartCommand": { "db": "pg_ctl -D /var/lib/postgresql/data start", "cache": ["redis-server", "--daemonize", "yes"] }
    }`,
    facts: { user: "rails" },
    expected: {
      remoteUser: "rails",
      steps: [
        shell("postCreateCommand", "bin/setup"),
        parallel("postStartCommand", {
          db: { _tag: "Shell", command: "pg_ctl -D /var/lib/postgresql/data start" },
          cache: { _tag: "Exec", argv: ["redis-server", "--daemonize", "yes"] }
        })
      ]
    }
  },
  {
    name: "comments and trailing commas (a Go repository), hooks in the spec's order",
    text: `// For format details, see https://aka.ms/devcontainer.json.
    {
      "name": "Go",
      /* the Go team's image */
      "image": "images.example/devcontainers/go:1-1.23-bookworm",
      "postCreateCommand": "go install ./...", // after the content
      "updateContentCommand": "go mod download",
      "onCreateCommand": "git config --global --add safe.directory \${containerWorkspaceFolder}",
      "containerEnv": { "CGO_ENABLED": "0", },
      "forwardPorts": [8080, "db:5432",],
    }`,
    expected: {
      containerEnv: { CGO_ENABLED: "0" },
      forwardPorts: [8080, "db:5432"],
      steps: [
        shell("onCreateCommand", "git config --global --add safe.directory /workspaces/api"),
        shell("updateContentCommand", "go mod download"),
        shell("postCreateCommand", "go install ./...")
      ]
    }
  },
  {
    name: "a metadata label with its own postCreateCommand, env and remoteUser: image first, devcontainer.json last-wins",
    text: `{
      "image": "images.example/acme/base:2",
      "containerEnv": { "MODE": "repo" },
      "remoteEnv": { "EDITOR": "code --wait", "DEBUG": null },
      "postCreateCommand": "make setup",
      "postStartCommand": "make services"
    }`,
    facts: {
      metadataLabel: JSON.stringify([
        {
          postCreateCommand: "sudo chown -R vscode /home/vscode",
          postStartCommand: ["/usr/local/share/docker-init.sh"],
          remoteUser: "vscode",
          containerEnv: { MODE: "image", TZ: "UTC" },
          remoteEnv: { DEBUG: "1", PAGER: "less" },
          forwardPorts: [9229],
          entrypoint: "/usr/local/share/docker-init.sh"
        }
      ]),
      user: "root"
    },
    expected: {
      containerEnv: { MODE: "repo", TZ: "UTC" },
      remoteEnv: { PAGER: "less", EDITOR: "code --wait" },
      remoteUser: "vscode",
      forwardPorts: [9229],
      steps: [
        shell("postCreateCommand", "sudo chown -R vscode /home/vscode", label),
        shell("postCreateCommand", "make setup"),
        exec("postStartCommand", ["/usr/local/share/docker-init.sh"], label),
        shell("postStartCommand", "make services")
      ]
    }
  },
  {
    name: "hostRequirements over the user's cap are capped",
    text: `{ "image": "x", "hostRequirements": { "cpus": 8, "memory": "16gb", "storage": "64gb" } }`,
    limits: { cpus: 4, memoryMb: 8192 },
    expected: {
      cpus: 4,
      memoryMb: 8192,
      warnings: [
        "hostRequirements.cpus asks for 8 CPUs; capped at your limit of 4 CPUs",
        "hostRequirements.memory asks for 16384 MB; capped at your limit of 8192 MB"
      ]
    }
  },
  {
    name: "hostRequirements under the user's cap are what the PR asked",
    text: `{ "image": "x", "hostRequirements": { "cpus": 2, "memory": "512mb" } }`,
    limits: { cpus: 4, memoryMb: 8192 },
    expected: { cpus: 2, memoryMb: 512 }
  },
  {
    name: "no hostRequirements: the user's own caps",
    text: `{ "image": "x" }`,
    limits: { cpus: 3, memoryMb: 4096 },
    expected: { cpus: 3, memoryMb: 4096 }
  },
  {
    name: "more than the machine has: a warning, and the machine's size",
    text: `{ "image": "x", "hostRequirements": { "cpus": 32, "memory": "1tb" } }`,
    host: { cpus: 2, memoryMb: 7900 },
    expected: {
      cpus: 2,
      memoryMb: 7900,
      warnings: [
        "hostRequirements.cpus asks for 32 CPUs, but this machine has 2 CPUs",
        "hostRequirements.memory asks for 1048576 MB, but this machine has 7900 MB"
      ]
    }
  },
  {
    name: "the label's hostRequirements count too: the larger wins",
    text: `{ "image": "x", "hostRequirements": { "cpus": 2 } }`,
    facts: { metadataLabel: '{ "hostRequirements": { "cpus": 4, "memory": "2gb" } }' },
    expected: { cpus: 4, memoryMb: 2048 }
  },
  {
    name: "remoteEnv variables: containerEnv with defaults, never the host's environment",
    text: `{
      "image": "x",
      "containerEnv": { "APP_HOME": "/srv/app" },
      "remoteEnv": {
        "LOG": "\${containerEnv:APP_HOME}/log",
        "LANG": "\${containerEnv:MISSING:en_US.UTF-8}",
        "EMPTY": "\${containerEnv:MISSING}",
        "TOKEN": "\${localEnv:GITHUB_TOKEN}",
        "NAME": "\${localWorkspaceFolderBasename}",
        "WS": "\${containerWorkspaceFolder}"
      }
    }`,
    expected: {
      containerEnv: { APP_HOME: "/srv/app" },
      remoteEnv: { LOG: "/srv/app/log", LANG: "en_US.UTF-8", EMPTY: "", TOKEN: "", NAME: "api", WS: "/workspaces/api" },
      warnings: [
        `remoteEnv.TOKEN: \${localEnv:…} is not read from the host (PR content must not read your environment); using an empty value`
      ]
    }
  },
  {
    name: "a root remoteUser is not honoured",
    text: `{ "image": "x", "remoteUser": "root", "postCreateCommand": "apt-get update" }`,
    expected: {
      remoteUser: null,
      steps: [shell("postCreateCommand", "apt-get update")],
      warnings: [`${file}: the root user is not honoured: the sandbox runs as its non-root workspace owner`]
    }
  },
  {
    name: "a root user from the label is not honoured either",
    text: `{ "image": "x" }`,
    facts: { metadataLabel: '[{ "containerUser": "0:0" }]', user: "node" },
    expected: {
      remoteUser: null,
      warnings: [`${label}: the root user is not honoured: the sandbox runs as its non-root workspace owner`]
    }
  },
  {
    name: "a trusted repository may run as root",
    text: `{ "image": "x", "containerUser": "root" }`,
    trusted: true,
    expected: { remoteUser: "root", runAsRoot: true }
  },
  {
    name: "the image's own root USER is not a request: no warning",
    text: `{ "image": "x" }`,
    facts: { user: "root" },
    expected: { remoteUser: null }
  },
  {
    name: "extensions: label and file unioned, deduplicated, removals and bad ids dropped",
    text: `{
      "image": "x",
      "extensions": ["golang.Go"],
      "customizations": { "vscode": { "extensions": ["ms-python.python", "MS-Python.Python", "-redhat.vscode-yaml", "not an id", "ms-toolsai.jupyter@2024.1.0"] } }
    }`,
    facts: {
      metadataLabel:
        '[{ "customizations": { "vscode": { "extensions": ["redhat.vscode-yaml", "ms-python.python"] } } }]'
    },
    expected: {
      extensions: ["ms-python.python", "golang.Go", "ms-toolsai.jupyter@2024.1.0"],
      warnings: ["customizations.vscode.extensions: an entry that is not a publisher.name id is skipped"]
    }
  },
  {
    name: "a malformed label is ignored with a warning",
    text: `{ "image": "x", "postCreateCommand": "make" }`,
    facts: { metadataLabel: '[{ "postCreateCommand": 42 }]' },
    expected: {
      steps: [shell("postCreateCommand", "make")],
      warnings: [
        "the image's devcontainer.metadata label: [0].postCreateCommand: expected a string, a non-empty array of strings or an object of named commands: the label is ignored (the image's own devcontainer settings are not applied)"
      ]
    }
  },
  {
    name: "a label that is not JSON is ignored with a warning",
    text: `{ "image": "x" }`,
    facts: { metadataLabel: "[{ remoteUser: " },
    expected: {
      warnings: [
        "the image's devcontainer.metadata label: invalid JSON: the label is ignored (the image's own devcontainer settings are not applied)"
      ]
    }
  },
  {
    name: "a label's widening is not honoured for an untrusted repository",
    text: `{ "image": "x" }`,
    facts: { metadataLabel: '[{ "privileged": true, "capAdd": ["SYS_ADMIN"], "remoteUser": "dev" }]' },
    expected: {
      remoteUser: "dev",
      warnings: ["privileged", "capAdd"].map(
        (property) =>
          `the image's devcontainer.metadata label: devcontainer.metadata[0].${property} is left out: widens the container; the repository is not trusted: adding "github.com/fork/api" to trustedRepositories in your config.json honours it`
      )
    }
  },
  {
    name: "empty commands are not steps",
    text: `{ "image": "x", "onCreateCommand": "", "postCreateCommand": {}, "postStartCommand": "  " }`,
    expected: {}
  }
]

const run = (row: Row) =>
  Effect.gen(function* () {
    const spec = yield* readDevcontainer({
      located: { path: file, text: row.text },
      host: "github.com",
      repository: row.trusted === true ? "acme/api" : "fork/api",
      trustedRepositories: ["github.com/acme/api"]
    })
    const facts: ImageFacts = { metadataLabel: undefined, user: "", env: {}, ...row.facts }
    const host = row.host ?? { cpus: 16, memoryMb: 65536 }
    return planEnvironment(spec, "prbox-built:abc", facts, row.limits ?? {}, host.cpus, host.memoryMb)
  })

describe("planEnvironment", () => {
  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function* () {
        const planned = yield* run(row)
        const expected = { ...defaults, ...row.expected }
        const { plan } = planned
        assert.deepStrictEqual(
          {
            containerEnv: plan.containerEnv,
            remoteEnv: plan.remoteEnv,
            remoteUser: plan.remoteUser,
            workspaceFolder: plan.workspaceFolder,
            steps: plan.steps,
            cpus: plan.cpus,
            memoryMb: plan.memoryMb,
            extensions: plan.extensions,
            forwardPorts: plan.forwardPorts,
            warnings: planned.warnings,
            runAsRoot: planned.runAsRoot
          },
          expected
        )
        assert.strictEqual(plan.image, "prbox-built:abc")
        assert.strictEqual(planned.trusted === null, row.trusted !== true)
      })
    )
  }

  it.effect("a trusted repository gets the label's widening and its own, label first", () =>
    Effect.gen(function* () {
      const planned = yield* run({
        name: "",
        text: `{ "image": "x", "capAdd": ["SYS_PTRACE"], "mounts": ["type=bind,source=/home/me/.cache,target=/cache,readonly"] }`,
        facts: {
          metadataLabel:
            '[{ "capAdd": ["SYS_ADMIN", "SYS_PTRACE"], "privileged": true, "mounts": [{ "type": "volume", "source": "x", "target": "/cache" }] }]'
        },
        trusted: true,
        expected: {}
      })
      assert.deepStrictEqual(planned.trusted, {
        runArgs: [],
        capAdd: ["SYS_ADMIN", "SYS_PTRACE"],
        securityOpt: [],
        privileged: true,
        mounts: [{ type: "bind", source: "/home/me/.cache", target: "/cache", readOnly: true }],
        workspaceMount: null,
        appPort: [],
        buildOptions: []
      } satisfies Widening)
      assert.deepStrictEqual(planned.warnings, [])
    })
  )
})

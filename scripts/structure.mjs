// The layout's rules, checked by dependency-cruiser (`pnpm structure`, run by
// scripts/test): the dependency direction of the README's Layout section.
//   apps → client/protocol/engine → store/docker/git/registry/devcontainer → domain → effect
// A rule that is red fails the run. Type-only imports count (`import type`
// ties modules together just as much), so a cycle cannot hide behind them.

/** The library a module resolves to, wherever pnpm keeps it. */
const library = (name) => `node_modules/${name}/`

const adapters = "(store|docker|git|registry)"

export default {
  forbidden: [
    {
      name: "no-cycle",
      comment: "An import cycle (type-only imports included): modules that cannot be read or changed one at a time.",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "no-app-imports-another-app",
      comment: "An app reaches another app's behaviour through a package (packages/client), never its files.",
      severity: "error",
      from: { path: "^apps/([^/]+)/src/" },
      to: { path: "^apps/", pathNot: "^apps/$1/" }
    },
    {
      name: "app-tests-run-other-apps-through-their-harness",
      comment:
        "An end-to-end test may start another app (the CLI's tests start a daemon) through that app's test/support.ts, never by importing its files.",
      severity: "error",
      from: { path: "^apps/([^/]+)/test/" },
      to: { path: "^apps/", pathNot: ["^apps/$1/", "^apps/[^/]+/test/support[.]ts$"] }
    },
    {
      name: "no-package-imports-an-app",
      comment: "Packages are what apps are built from; they never reach back into an app.",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^apps/" }
    },
    {
      name: "domain-imports-only-effect",
      comment: "packages/domain is pure: ids, schemas, decisions. Nothing of ours, no Node, only effect.",
      severity: "error",
      from: { path: "^packages/domain/src/" },
      to: { pathNot: ["^packages/domain/src/", library("effect")] }
    },
    {
      name: "adapters-import-only-domain",
      comment: "store, docker, git and registry sit on domain only: not on each other, nor on anything above them.",
      severity: "error",
      from: { path: `^packages/${adapters}/src/` },
      to: { path: "^packages/", pathNot: ["^packages/domain/", "^packages/$1/"] }
    },
    {
      name: "devcontainer-is-pure",
      comment:
        "packages/devcontainer decides a repository's environment from files the caller reads: domain, effect, jsonc-parser and yaml only.",
      severity: "error",
      from: { path: "^packages/devcontainer/src/" },
      to: {
        pathNot: [
          "^packages/devcontainer/src/",
          "^packages/domain/",
          library("effect"),
          library("jsonc-parser"),
          library("yaml")
        ]
      }
    },
    {
      name: "node-only-in-node-folders",
      comment:
        "Node's own modules are reached only from a node/ folder in the packages that are rules and contracts " +
        "(engine, domain, devcontainer, protocol, mcp) and in registry, whose references, manifests and " +
        "credential rules are pure. The runtime port names Node's stream types (type-only), " +
        "as the daemon gets Node streams from it: the two rules below allow that and nothing more.",
      severity: "error",
      from: {
        path: "^packages/(engine|domain|devcontainer|protocol|mcp|registry)/src/",
        pathNot: ["/node/", "^packages/engine/src/(ContainerRuntime|RuntimeStreams)[.]ts$"]
      },
      to: { dependencyTypes: ["core"] }
    },
    {
      name: "runtime-port-names-node-stream-types-only",
      comment: "The runtime port's one exception to node-only-in-node-folders: type-only imports of node:stream.",
      severity: "error",
      from: { path: "^packages/engine/src/(ContainerRuntime|RuntimeStreams)[.]ts$" },
      to: { dependencyTypes: ["core"], dependencyTypesNot: ["type-only"] }
    },
    {
      name: "runtime-port-names-node-stream-only",
      comment: "The runtime port's one exception to node-only-in-node-folders: node:stream, nothing else of Node.",
      severity: "error",
      from: { path: "^packages/engine/src/(ContainerRuntime|RuntimeStreams)[.]ts$" },
      to: { dependencyTypes: ["core"], pathNot: "^(node:)?stream$" }
    },
    {
      name: "engine-top-imports-no-room",
      comment:
        "The engine's ports and what crosses its rooms (src/*.ts) import no room: rooms are built on them. The package's index and the EngineError union gather the rooms' exports.",
      severity: "error",
      from: { path: "^packages/engine/src/[^/]+$", pathNot: "^packages/engine/src/(index|EngineError)[.]ts$" },
      to: { path: "^packages/engine/src/[^/]+/" }
    },
    {
      name: "engine-rooms-import-no-node-folder",
      comment:
        "Implementations are chosen where the engine is composed (src/node): a room's rules never import a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/[^/]+/[^/]+$", pathNot: "^packages/engine/src/node/" },
      to: { path: ["^packages/engine/src/node/", "^packages/engine/src/[^/]+/node/"] }
    },
    {
      name: "engine-folder-without-rule-imports-no-folder",
      comment:
        "A new engine folder imports no other folder until scripts/structure.mjs says which it may (an engine-<folder>-imports rule).",
      severity: "error",
      from: {
        path: "^packages/engine/src/([^/]+)/",
        pathNot:
          "^packages/engine/src/(node|exec|workspace|features|environment|prebuild|create|reconcile|sandbox|files|jobs|previews|gc|ssh)/"
      },
      to: { path: "^packages/engine/src/[^/]+/", pathNot: "^packages/engine/src/$1/" }
    },
    {
      name: "engine-exec-imports",
      comment:
        "Where and how a command runs in a running sandbox: on the ports only. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/exec/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(exec)/[^/]+$", "^packages/engine/src/exec/node/"]
      }
    },
    {
      name: "engine-workspace-imports",
      comment:
        "A sandbox's folders and the git in its container. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/workspace/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(workspace|exec)/[^/]+$", "^packages/engine/src/workspace/node/"]
      }
    },
    {
      name: "engine-features-imports",
      comment:
        "Devcontainer features: fetched and installed by an image build, on the ports only. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/features/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(features)/[^/]+$", "^packages/engine/src/features/node/"]
      }
    },
    {
      name: "engine-environment-imports",
      comment:
        "Choosing and preparing an environment: decided before admission, on the ports, exec and features. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/environment/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(environment|exec|features)/[^/]+$", "^packages/engine/src/environment/node/"]
      }
    },
    {
      name: "engine-prebuild-imports",
      comment:
        "Prebuilds: their key, their decisions and how one is made, on the ports, exec, workspace, features and environment; create may start from one. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/prebuild/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: [
          "^packages/engine/src/(prebuild|exec|workspace|features|environment)/[^/]+$",
          "^packages/engine/src/prebuild/node/"
        ]
      }
    },
    {
      name: "engine-reconcile-imports",
      comment:
        "The reconcile passes: on the ports and the store only. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/reconcile/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(reconcile)/[^/]+$", "^packages/engine/src/reconcile/node/"]
      }
    },
    {
      name: "engine-create-imports",
      comment:
        "A sandbox's create: its environment, its folders, its container. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/create/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: [
          "^packages/engine/src/(create|exec|workspace|environment|prebuild)/[^/]+$",
          "^packages/engine/src/create/node/"
        ]
      }
    },
    {
      name: "engine-sandbox-imports",
      comment:
        "The sandbox service's operations, over create and reconcile. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/sandbox/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: [
          "^packages/engine/src/(sandbox|exec|workspace|features|environment|create|reconcile)/[^/]+$",
          "^packages/engine/src/sandbox/node/"
        ]
      }
    },
    {
      name: "engine-files-imports",
      comment:
        "The workspace's files of a running sandbox: exec's scripts, never another service's insides. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/files/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(files|exec|workspace)/[^/]+$", "^packages/engine/src/files/node/"]
      }
    },
    {
      name: "engine-jobs-imports",
      comment:
        "Background commands: exec's place, the sandbox service's types. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/jobs/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(jobs|exec|sandbox)/[^/]+$", "^packages/engine/src/jobs/node/"]
      }
    },
    {
      name: "engine-previews-imports",
      comment:
        "Reaching a sandbox's ports. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/previews/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(previews|exec|workspace)/[^/]+$", "^packages/engine/src/previews/node/"]
      }
    },
    {
      name: "engine-ssh-imports",
      comment:
        "SSH into a sandbox: its exec target (running, not fenced). Its node/ implementation may import its room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/ssh/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(ssh|exec)/[^/]+$", "^packages/engine/src/ssh/node/"]
      }
    },
    {
      name: "engine-gc-imports",
      comment:
        "gc stops and deletes through the sandbox service, as a user would. A room's node/ implementations may import their room; no room imports a node/ folder.",
      severity: "error",
      from: { path: "^packages/engine/src/gc/" },
      to: {
        path: "^packages/engine/src/[^/]+/",
        pathNot: ["^packages/engine/src/(gc|exec|workspace|sandbox|reconcile)/[^/]+$", "^packages/engine/src/gc/node/"]
      }
    },
    {
      name: "engine-below-the-apps-and-their-contracts",
      comment: "The engine knows nothing of the daemon's API (protocol) or its clients (client).",
      severity: "error",
      from: { path: "^packages/engine/src/" },
      to: { path: "^packages/(protocol|client)/" }
    },
    {
      name: "protocol-is-contracts-only",
      comment: "The API's schemas and errors: domain only, never the engine or an adapter.",
      severity: "error",
      from: { path: "^packages/protocol/src/" },
      to: { path: "^packages/", pathNot: ["^packages/protocol/", "^packages/domain/"] }
    },
    {
      name: "client-on-protocol-and-domain",
      comment: "What every client shares speaks the API (protocol) and the domain, never the engine or an adapter.",
      severity: "error",
      from: { path: "^packages/client/src/" },
      to: { path: "^packages/", pathNot: ["^packages/client/", "^packages/protocol/", "^packages/domain/"] }
    },
    {
      name: "mcp-on-client-protocol-and-domain",
      comment:
        "The MCP server is a client of prboxd: the shared client code, the API and the domain, never the engine or an adapter.",
      severity: "error",
      from: { path: "^packages/mcp/src/" },
      to: {
        path: "^packages/",
        pathNot: ["^packages/mcp/", "^packages/client/", "^packages/protocol/", "^packages/domain/"]
      }
    },
    {
      name: "dockerode-stays-in-docker",
      comment: "Adapters expose our types only: dockerode is reached through packages/docker.",
      severity: "error",
      from: { path: "^(packages|apps)/", pathNot: "^packages/docker/" },
      to: { path: [library("dockerode"), library("@types/dockerode")] }
    },
    {
      name: "sqlite-stays-in-store",
      comment:
        "Adapters expose our types only: better-sqlite3 is reached through packages/store (tests may seed files).",
      severity: "error",
      from: { path: "^(packages|apps)/[^/]+/src/", pathNot: "^packages/store/" },
      to: { path: library("better-sqlite3") }
    },
    {
      name: "no-unresolvable",
      comment:
        "An import the check cannot resolve could hide any of the rules above: fail closed. The package's bins " +
        "(scripts/package/files) import the bundle by its path inside the installed package.",
      severity: "error",
      from: { pathNot: "^scripts/package/files/" },
      to: { couldNotResolve: true, pathNot: "^vscode$" }
    }
  ],
  options: {
    // `import type` and type-only re-exports are dependencies too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["(^|/)node_modules/", "(^|/)dist/", "^apps/vscode/media/"] },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "types", "node", "default"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".d.ts"]
    },
    reporterOptions: { text: { highlightFocused: true } }
  }
}

import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Config, dotfilesOf, InvalidConfig, SandboxService } from "../src/index.ts"
import * as NodeConfig from "../src/node/NodeConfig.ts"
import { healthzTag, rowOf, withEngine } from "./harness.ts"

/** A prbox home and a user home side by side in a temp dir that removes itself. */
const homes = Effect.acquireRelease(
  Effect.sync(() => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "prbox-config-")))
    const user = join(root, "user")
    const prbox = join(user, ".prbox")
    mkdirSync(prbox, { recursive: true })
    mkdirSync(join(user, "code"), { recursive: true })
    mkdirSync(join(root, "outside"), { recursive: true })
    return { root, user, prbox }
  }),
  ({ root }) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

const load = (prbox: string, user: string, text: string | undefined) =>
  Effect.gen(function* () {
    if (text !== undefined) writeFileSync(join(prbox, "config.json"), text)
    const config = yield* Effect.provide(Config, NodeConfig.layer({ home: prbox, userHome: user }))
    return yield* config.load
  }).pipe(Effect.provide(NodeFileSystem.layer))

describe("config file", () => {
  it.live("a missing file means the defaults", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { user, prbox } = yield* homes
        const config = yield* load(prbox, user, undefined)
        assert.isUndefined(config.image, "no image: a devcontainer.json or prbox's default decides")
        assert.deepStrictEqual(config.trustedRepositories, [])
        assert.strictEqual(config.idleTimeoutMinutes, 30)
        assert.strictEqual(config.cleanupDelayHours, 24)
        assert.isFalse(config.deleteWhenClosed, "a closed PR's sandbox is kept unless asked")
        assert.strictEqual(config.closedGraceMinutes, 60)
        assert.deepStrictEqual(config.setupCommands, [])
        assert.isUndefined(config.previewPort, "no preview port: the daemon picks one and keeps it")
        assert.deepStrictEqual(config.ports, [])
        assert.deepStrictEqual(config.registryCredentials, [], "no registry gets the user's credentials unless listed")
        assert.strictEqual(config.userEnvProbeTimeoutSeconds, 10, "the user's shell gets the CLI's 10 s")
      })
    )
  )

  it.live("dotfiles: a plain string is the repository, targetPath ~/dotfiles; none configured, none", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { user, prbox } = yield* homes
        assert.deepStrictEqual(dotfilesOf(yield* load(prbox, user, '{ "dotfiles": "me/dots" }')), {
          repository: "me/dots",
          targetPath: "~/dotfiles"
        })
        const full = '{ "dotfiles": { "repository": "~/dots", "installCommand": "go.sh", "targetPath": "~/.dots" } }'
        assert.deepStrictEqual(dotfilesOf(yield* load(prbox, user, full)), {
          repository: "~/dots",
          installCommand: "go.sh",
          targetPath: "~/.dots"
        })
        assert.isUndefined(dotfilesOf(yield* load(prbox, user, "{}")))
      })
    )
  )

  const invalid: ReadonlyArray<readonly [string, string, RegExp]> = [
    ["not JSON", "{ image: ", /not valid JSON/],
    ["a wrong type names the field", '{ "memoryMb": "lots" }', /memoryMb/],
    ["a negative limit names the field", '{ "pidsLimit": -1 }', /pidsLimit/],
    ["a grace of zero minutes", '{ "closedGraceMinutes": 0 }', /closedGraceMinutes/],
    ["a probe timeout of zero", '{ "userEnvProbeTimeoutSeconds": 0 }', /userEnvProbeTimeoutSeconds/],
    ["deleteWhenClosed as a string", '{ "deleteWhenClosed": "yes" }', /deleteWhenClosed/],
    ["prebuilds true (only false or an object)", '{ "prebuilds": true }', /prebuilds/],
    ["a prebuilds cap of zero", '{ "prebuilds": { "maxGiB": 0 } }', /maxGiB/],
    ["prebuilds kept for half a day", '{ "prebuilds": { "keepDays": 0.5 } }', /keepDays/],
    ["a hook that is not a command", '{ "hooks": { "onSandboxReady": [] } }', /onSandboxReady/],
    ["a mount outside the home", '{ "mounts": [{ "source": "../outside", "target": "/data" }] }', /mounts\[0\]/],
    ["a mount that does not exist", '{ "mounts": [{ "source": "nope", "target": "/data" }] }', /does not exist/],
    ["a relative mount target", '{ "mounts": [{ "source": "code", "target": "data" }] }', /target/],
    ["a registry with a scheme", '{ "registryCredentials": ["https://localhost:5000"] }', /registryCredentials/],
    ["a registry with a path", '{ "registryCredentials": ["localhost:5000/org"] }', /host\[:port\]/],
    [
      "a featuresRegistry without a namespace",
      '{ "featuresRegistry": "localhost:5000" }',
      /featuresRegistry is host\[:port\]\/<namespace>/
    ],
    [
      "a featuresRegistry with a scheme",
      '{ "featuresRegistry": "https://localhost:5000/features" }',
      /featuresRegistry/
    ],
    ["a preview port of 0", '{ "previewPort": 0 }', /between 1 and 65535\s+at \["previewPort"\]/],
    ["a preview port above 65535", '{ "previewPort": 65536 }', /between 1 and 65535\s+at \["previewPort"\]/],
    ["a preview port that is not an integer", '{ "previewPort": 8080.5 }', /an integer\s+at \["previewPort"\]/],
    ["a preview port given as a string", '{ "previewPort": "8080" }', /Expected number\s+at \["previewPort"\]/],
    ["a port given as a bare number", '{ "ports": [3000] }', /Expected object\s+at \["ports"\]\[0\]/],
    ["a port out of range", '{ "ports": [{ "port": 70000 }] }', /between 1 and 65535\s+at \["ports"\]\[0\]\["port"\]/],
    [
      "a port entry without its port",
      '{ "ports": [{ "label": "web" }] }',
      /Missing key\s+at \["ports"\]\[0\]\["port"\]/
    ],
    [
      "dotfiles whose targetPath leaves the home",
      '{ "dotfiles": { "repository": "me/dots", "targetPath": "~/../etc" } }',
      /targetPath ~\/\.\.\/etc must not leave the home with \.\.\s+at \["dotfiles"\]\["targetPath"\]/
    ],
    [
      "dotfiles whose targetPath is absolute",
      '{ "dotfiles": { "repository": "me/dots", "targetPath": "/etc" } }',
      /must be inside the sandbox user's home/
    ],
    ["dotfiles without a repository", '{ "dotfiles": { "installCommand": "install.sh" } }', /repository/],
    ["dotfiles as an empty string", '{ "dotfiles": "" }', /dotfiles/],
    [
      "an unknown onAutoForward",
      '{ "ports": [{ "port": 3000, "onAutoForward": "sometimes" }] }',
      /"openBrowser" \| "notify" \| "silent" \| "ignore"\s+at \["ports"\]\[0\]\["onAutoForward"\]/
    ]
  ]
  for (const [name, text, expected] of invalid) {
    it.live(`${name}: ${expected.source}`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { user, prbox } = yield* homes
          const error = yield* Effect.flip(load(prbox, user, text))
          assert.instanceOf(error, InvalidConfig)
          assert.match(error.message, expected)
        })
      )
    )
  }

  it.live(
    "prebuilds: on by default (10 GiB, 7 days), false turns them off, a part given keeps the other's default",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { user, prbox } = yield* homes
          assert.deepStrictEqual((yield* load(prbox, user, "{}")).prebuilds, { maxGiB: 10, keepDays: 7 })
          assert.strictEqual((yield* load(prbox, user, '{ "prebuilds": false }')).prebuilds, false)
          assert.deepStrictEqual((yield* load(prbox, user, '{ "prebuilds": { "maxGiB": 2.5 } }')).prebuilds, {
            maxGiB: 2.5,
            keepDays: 7
          })
        })
      )
  )

  it.live("featuresRegistry is read as written", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { user, prbox } = yield* homes
        const config = yield* load(prbox, user, '{ "featuresRegistry": "localhost:5000/devcontainers/features" }')
        assert.strictEqual(config.featuresRegistry, "localhost:5000/devcontainers/features")
        assert.isUndefined((yield* load(prbox, user, "{}")).featuresRegistry)
      })
    )
  )

  it.live("previewPort and ports are read as written", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { user, prbox } = yield* homes
        const config = yield* load(
          prbox,
          user,
          JSON.stringify({
            previewPort: 47100,
            ports: [{ port: 3000, label: "web", onAutoForward: "openBrowser" }, { port: 6006 }]
          })
        )
        assert.strictEqual(config.previewPort, 47100)
        assert.deepStrictEqual(config.ports, [
          { port: 3000, label: "web", onAutoForward: "openBrowser" },
          { port: 6006 }
        ])
      })
    )
  )

  it.live("a mount inside the home is resolved; a symlink escaping it is refused", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { root, user, prbox } = yield* homes
        const config = yield* load(prbox, user, '{ "mounts": [{ "source": "code", "target": "/code" }] }')
        assert.deepStrictEqual(config.mounts, [{ source: join(user, "code"), target: "/code", readOnly: true }])
        symlinkSync(join(root, "outside"), join(user, "escape"))
        const error = yield* Effect.flip(load(prbox, user, '{ "mounts": [{ "source": "escape", "target": "/data" }] }'))
        assert.match(error.message, /outside your home/)
      })
    )
  )
})

describe("a broken config file", () => {
  it.live("fails new opens with the validation message while existing sandboxes keep working", () =>
    withEngine({ configFile: true }, ({ remote, home }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        writeFileSync(join(home, "config.json"), JSON.stringify({ image: healthzTag }))
        const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
        yield* sandboxes.awaitIdle(opened.id)
        assert.strictEqual((yield* rowOf(opened.id)).status, "running")
        writeFileSync(join(home, "config.json"), '{ "idleTimeoutMinutes": "soon" }')
        const error = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 2 }))
        assert.instanceOf(error, InvalidConfig)
        assert.match(error.message, /idleTimeoutMinutes/)
        assert.lengthOf(yield* sandboxes.listAll, 1)
        const stopped = yield* sandboxes.stop(opened.id)
        assert.strictEqual(stopped.status, "stopped")
        writeFileSync(join(home, "config.json"), JSON.stringify({ image: healthzTag }))
        const fixed = yield* sandboxes.open({ input: remote.path, pr: 2 })
        yield* sandboxes.awaitIdle(fixed.id)
        assert.strictEqual((yield* rowOf(fixed.id)).status, "running", "a fixed file applies without a restart")
      })
    )
  )
})

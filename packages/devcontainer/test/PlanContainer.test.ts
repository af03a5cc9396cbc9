import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ImageFacts, type Limits, planEnvironment, readDevcontainer } from "../src/index.ts"

// What a plan makes of the container settings that widen nothing (runArgs
// flags, volumes) and of the widening it leaves out, from devcontainer.json
// and from the image's metadata label.

const file = ".devcontainer/devcontainer.json"
const hint =
  'the repository is not trusted: adding "github.com/fork/api" to trustedRepositories in your config.json honours it'
/** prbox's own folders besides the workspace, as the engine hands them in. */
const reserved = ["/home/prbox", "/opt/prbox/code-server"]

const plan = (
  text: string,
  options: { readonly label?: string; readonly limits?: Limits; readonly trusted?: boolean } = {}
) =>
  Effect.gen(function* () {
    const spec = yield* readDevcontainer({
      located: { path: file, text },
      host: "github.com",
      repository: options.trusted === true ? "acme/api" : "fork/api",
      trustedRepositories: ["github.com/acme/api"]
    })
    const facts: ImageFacts = { metadataLabel: options.label, user: "", env: {} }
    return planEnvironment(spec, "img", facts, options.limits ?? {}, 16, 65536, reserved)
  })

describe("planEnvironment: what widens nothing", () => {
  it.effect("runArgs env after containerEnv, a hostname, hosts, no-new-privileges and shm in the plan", () =>
    Effect.gen(function* () {
      const planned = yield* plan(
        `{ "image": "x", "containerEnv": { "A": "env", "B": "env" }, "runArgs": ["-e", "B=run \${containerWorkspaceFolderBasename}", "--hostname", "rev", "--add-host=db.local:10.0.0.9", "--security-opt", "no-new-privileges", "--shm-size=1g"] }`
      )
      assert.deepStrictEqual(planned.plan.containerEnv, { A: "env", B: "run api" })
      assert.deepStrictEqual(planned.plan.container, {
        hostname: "rev",
        extraHosts: ["db.local:10.0.0.9"],
        securityOpt: ["no-new-privileges"],
        shmSizeMb: 1024,
        volumes: []
      })
      assert.deepStrictEqual(planned.ignored, [])
      assert.deepStrictEqual(planned.warnings, [])
    })
  )

  it.effect("nothing asked: no container options at all", () =>
    Effect.gen(function* () {
      const planned = yield* plan('{ "image": "x", "runArgs": ["--init"] }')
      assert.isUndefined(planned.plan.container)
    })
  )

  it.effect("--cpus, --memory and --shm-size above the user's limits are capped, with a warning each", () =>
    Effect.gen(function* () {
      const planned = yield* plan('{ "image": "x", "runArgs": ["--cpus=8", "--memory", "8g", "--shm-size", "4g"] }', {
        limits: { cpus: 2, memoryMb: 2048 }
      })
      assert.strictEqual(planned.plan.cpus, 2)
      assert.strictEqual(planned.plan.memoryMb, 2048)
      assert.strictEqual(planned.plan.container?.shmSizeMb, 2048)
      assert.deepStrictEqual(planned.warnings, [
        "runArgs --shm-size asks for 4096 MB; capped at your limit of 2048 MB",
        "runArgs --cpus asks for 8 CPUs; capped at your limit of 2 CPUs",
        "runArgs --memory asks for 8192 MB; capped at your limit of 2048 MB"
      ])
    })
  )

  it.effect("--cpus and --memory within the limits are the container's", () =>
    Effect.gen(function* () {
      const planned = yield* plan('{ "image": "x", "runArgs": ["--cpus", "1.5", "-m", "512m"] }', {
        limits: { cpus: 4, memoryMb: 4096 }
      })
      assert.strictEqual(planned.plan.cpus, 1.5)
      assert.strictEqual(planned.plan.memoryMb, 512)
      assert.deepStrictEqual(planned.warnings, [])
    })
  )

  it.effect("volumes: named and anonymous, variables substituted; over prbox's folders left out and listed", () =>
    Effect.gen(function* () {
      const planned = yield* plan(`{ "image": "x", "workspaceFolder": "/workspaces/app", "mounts": [
        "source=\${localWorkspaceFolderBasename}-nm,target=\${containerWorkspaceFolder}/node_modules,type=volume",
        { "type": "volume", "target": "/scratch" },
        { "type": "volume", "source": "ws", "target": "/workspaces/app" },
        { "type": "volume", "source": "up", "target": "/workspaces" },
        "type=volume,source=home,target=/home/prbox/.cache",
        "type=volume,source=cs,target=/opt/prbox",
        "type=volume,source=bad name,target=/x"
      ] }`)
      assert.deepStrictEqual(planned.plan.container?.volumes, [
        { source: "api-nm", target: "/workspaces/app/node_modules", readOnly: false },
        { source: null, target: "/scratch", readOnly: false }
      ])
      assert.deepStrictEqual(planned.ignored, [
        { property: "mounts[2]", detail: "mounts over /workspaces/app, which prbox mounts itself" },
        { property: "mounts[3]", detail: "mounts over /workspaces/app, which prbox mounts itself" },
        { property: "mounts[4]", detail: "mounts inside /home/prbox, which prbox mounts itself" },
        { property: "mounts[5]", detail: "mounts over /opt/prbox/code-server, which prbox mounts itself" }
      ])
      assert.include(
        planned.warnings,
        'mounts[6]: the source is not a volume name (letters, digits, "_.-"); the volume is not made'
      )
      assert.include(
        planned.warnings,
        `${file}: mounts[2] is left out: mounts over /workspaces/app, which prbox mounts itself`
      )
    })
  )
})

describe("planEnvironment: the image label", () => {
  const label = JSON.stringify([
    {
      privileged: true,
      capAdd: ["SYS_ADMIN"],
      mounts: [
        { type: "volume", source: "dind-var-lib-docker", target: "/var/lib/docker" },
        { type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock" }
      ]
    }
  ])

  it.effect(
    "an untrusted repository gets the label's volumes; its widening is left out and listed with the file's",
    () =>
      Effect.gen(function* () {
        const planned = yield* plan('{ "image": "x", "appPort": 3000 }', { label })
        assert.deepStrictEqual(planned.plan.container?.volumes, [
          { source: "dind-var-lib-docker", target: "/var/lib/docker", readOnly: false }
        ])
        assert.isNull(planned.trusted)
        assert.deepStrictEqual(
          planned.ignored.map((one) => one.property),
          [
            "appPort",
            "devcontainer.metadata[0].privileged",
            "devcontainer.metadata[0].capAdd",
            "devcontainer.metadata[0].mounts[1]"
          ]
        )
        assert.strictEqual(planned.ignored[3]?.detail, `mounts the Docker socket; ${hint}`)
      })
  )

  it.effect("a trusted repository gets the label's widening and lists nothing", () =>
    Effect.gen(function* () {
      const planned = yield* plan('{ "image": "x" }', { label, trusted: true })
      assert.deepStrictEqual(planned.ignored, [])
      assert.isTrue(planned.trusted?.privileged)
      assert.deepStrictEqual(planned.trusted?.mounts, [
        { type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock", readOnly: false }
      ])
      assert.strictEqual(planned.plan.container?.volumes.length, 1)
    })
  )
})

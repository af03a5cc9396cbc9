import { assert, describe, it } from "@effect/vitest"
import type { ContainerSpec } from "../src/ContainerSpec.ts"
import { composeProjectName, EXPOSED_PORT_LABEL, overlayCompose } from "../src/environment/ComposeOverlay.ts"

/** prbox's part of a Compose sandbox, from the ContainerSpec the single-container path makes (pure, a table). */
const labels = { "dev.prbox.sandbox": "sbx1", "dev.prbox.test": "run" }

const spec: ContainerSpec = {
  name: "prbox-sbx1",
  image: "prbox-build/app:abc",
  entrypoint: ["/opt/cs/node", "/opt/cs/entry"],
  args: ["--bind-addr", "0.0.0.0:8080", "/workspaces/app"],
  env: { PASSWORD: "p$w", HOME: "/home/prbox" },
  labels,
  carried: [
    { kind: "workspace", hostPath: "/state/ws", containerPath: "/workspaces/app" },
    { kind: "home", hostPath: "/state/home", containerPath: "/home/prbox" }
  ],
  shared: { hostPath: "/state/cs", containerPath: "/opt/cs", key: "v1" },
  binds: [{ hostPath: "/home/u/cache", containerPath: "/cache", readOnly: true }],
  volumes: [{ name: "prbox-sbx1-data", containerPath: "/data", readOnly: false }],
  user: "1000:1000",
  workingDir: "/workspaces/app",
  port: 8080,
  hostPort: 41000,
  relayPort: 9999,
  cpus: 2,
  memoryBytes: 1024,
  capDrop: ["NET_RAW"]
}

const project = {
  version: "3.8",
  name: "theirs",
  services: {
    app: {
      image: "<to be filled by the engine>",
      container_name: "fixed",
      command: "sleep infinity",
      entrypoint: ["/their/entry"],
      environment: { DB: "db", PASSWORD: "theirs" },
      labels: ["team=a", "dev.prbox.sandbox=forged"],
      volumes: [
        "/copy:/workspaces/app:cached",
        "/copy/sub:/workspaces/app/sub",
        { type: "volume", source: "node_modules", target: "/workspaces/app/node_modules" },
        "other:/home/prbox/.cache",
        "/copy:/home",
        { type: "volume", source: "cache", target: "/var/cache/app" }
      ],
      ports: ["127.0.0.1:3000:3000"],
      depends_on: ["db"]
    },
    db: { image: "redis", container_name: "db-fixed", labels: { "dev.prbox.sandbox": "forged" } }
  },
  networks: { back: { driver: "bridge" } },
  volumes: { node_modules: {}, cache: { labels: { keep: "yes" } } }
}

interface Overlaid {
  readonly services: Record<"app" | "db", Record<string, unknown> & { readonly labels: Record<string, string> }>
  readonly networks: Record<string, unknown>
  readonly volumes: Record<string, unknown>
}

const overlaid = (input: Parameters<typeof overlayCompose>[0]) => overlayCompose(input) as unknown as Overlaid
const out = overlaid({ project, service: "app", spec })

describe("overlayCompose", () => {
  it("the project name is Compose's charset, one a sandbox", () => {
    assert.strictEqual(composeProjectName("AbC.1"), "prbox-abc-1")
  })

  it("a service the project lacks is no overlay", () => {
    assert.isUndefined(overlayCompose({ project, service: "web", spec }))
  })

  it("the app service runs prbox's command, image, user, folder and limits; no fixed name", () => {
    const app = out.services.app
    assert.strictEqual(app.image, spec.image)
    assert.deepStrictEqual(app.entrypoint, spec.entrypoint)
    assert.deepStrictEqual(app.command, spec.args)
    assert.strictEqual(app.user, "1000:1000")
    assert.strictEqual(app.working_dir, "/workspaces/app")
    assert.strictEqual(app.cpus, 2)
    assert.strictEqual(app.mem_limit, 1024)
    assert.deepStrictEqual(app.cap_drop, ["NET_RAW"])
    assert.isTrue(app.init)
    assert.isUndefined(app.container_name)
    assert.isUndefined(out.services.db.container_name)
    assert.deepStrictEqual(app.depends_on, ["db"])
  })

  it("an image that runs code-server itself keeps its entrypoint (none is written)", () => {
    const { entrypoint: _entrypoint, ...own } = spec
    const app = overlaid({ project, service: "app", spec: own }).services.app
    assert.notProperty(app, "entrypoint")
  })

  it("prbox's environment wins over the service's, its `$` escaped; the service's own stays", () => {
    // prbox's values are literal to Compose: its `$` written `$$`.
    assert.deepStrictEqual(out.services.app.environment, { DB: "db", PASSWORD: "p$$w", HOME: "/home/prbox" })
  })

  it("code-server on the sandbox's 127.0.0.1 port, the relay on one Docker picks; the service's own kept", () => {
    assert.deepStrictEqual(out.services.app.ports, ["127.0.0.1:3000:3000", "127.0.0.1:41000:8080", "127.0.0.1::9999"])
    assert.strictEqual(out.services.app.labels[EXPOSED_PORT_LABEL], "8080")
  })

  it("prbox's folders mounted; nothing of the PR's over them or into them but a named volume in the workspace", () => {
    const volumes = out.services.app.volumes
    assert.deepStrictEqual(volumes, [
      { type: "volume", source: "node_modules", target: "/workspaces/app/node_modules" },
      { type: "volume", source: "cache", target: "/var/cache/app" },
      { type: "bind", source: "/state/ws", target: "/workspaces/app", read_only: false },
      { type: "bind", source: "/state/home", target: "/home/prbox", read_only: false },
      { type: "bind", source: "/state/cs", target: "/opt/cs", read_only: true },
      { type: "bind", source: "/home/u/cache", target: "/cache", read_only: true },
      { type: "volume", source: "prbox-sandbox-0", target: "/data", read_only: false }
    ])
    assert.deepStrictEqual(out.volumes["prbox-sandbox-0"], { name: "prbox-sbx1-data", labels })
  })

  it("every service, network (the default one too) and volume carries the sandbox's labels, over any forged", () => {
    assert.strictEqual(out.services.app.labels["dev.prbox.sandbox"], "sbx1")
    assert.strictEqual(out.services.app.labels.team, "a")
    // The other services say which they are: the runtime starts, stops and removes them with the sandbox's.
    assert.deepStrictEqual(out.services.db.labels, { ...labels, "dev.prbox.service": "db" })
    assert.notProperty(out.services.app.labels, "dev.prbox.service")
    assert.deepStrictEqual(out.networks.default, { labels })
    assert.deepStrictEqual(out.networks.back, { driver: "bridge", labels })
    assert.deepStrictEqual(out.volumes.node_modules, { labels })
    assert.deepStrictEqual(out.volumes.cache, { labels: { keep: "yes", ...labels } })
  })

  it("the file's version and project name are Compose's own to decide", () => {
    assert.notProperty(out, "version")
    assert.notProperty(out, "name")
  })
})

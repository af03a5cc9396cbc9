import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { check, file, hint, projectWith, root } from "./support.ts"

// Each rule of the Compose check on the app service: an untrusted repository
// opens without the setting (listed in `ignored`), a trusted one keeps it, and
// `untrustedWidening: "refuse"` refuses the file.

// name, the app service's keys, the key, the property listed, what an untrusted repository keeps of the key (undefined: nothing).
const widening: ReadonlyArray<readonly [string, Record<string, unknown>, string, string, unknown]> = [
  ["privileged", { privileged: true }, "privileged", "services.app.privileged", undefined],
  ["cap_add", { cap_add: ["SYS_ADMIN"] }, "cap_add", "services.app.cap_add", undefined],
  ["devices", { devices: ["/dev/fuse:/dev/fuse"] }, "devices", "services.app.devices", undefined],
  [
    "device_cgroup_rules",
    { device_cgroup_rules: ["c 1:3 mr"] },
    "device_cgroup_rules",
    "services.app.device_cgroup_rules",
    undefined
  ],
  ["gpus", { gpus: "all" }, "gpus", "services.app.gpus", undefined],
  ["runtime", { runtime: "nvidia" }, "runtime", "services.app.runtime", undefined],
  ["cgroup_parent", { cgroup_parent: "/system.slice" }, "cgroup_parent", "services.app.cgroup_parent", undefined],
  ["sysctls", { sysctls: { "net.ipv4.ip_forward": 1 } }, "sysctls", "services.app.sysctls", undefined],
  ["oom_kill_disable", { oom_kill_disable: true }, "oom_kill_disable", "services.app.oom_kill_disable", undefined],
  ["oom_score_adj below 0", { oom_score_adj: -900 }, "oom_score_adj", "services.app.oom_score_adj", undefined],
  ["use_api_socket", { use_api_socket: true }, "use_api_socket", "services.app.use_api_socket", undefined],
  ["external_links", { external_links: ["redis_1"] }, "external_links", "services.app.external_links", undefined],
  ["links outside the project", { links: ["cache:redis"] }, "links", "services.app.links", undefined],
  ["network_mode host", { network_mode: "host" }, "network_mode", "services.app.network_mode", undefined],
  [
    "network_mode of a container",
    { network_mode: "container:vpn" },
    "network_mode",
    "services.app.network_mode",
    undefined
  ],
  [
    "network_mode of a network outside",
    { network_mode: "bridge-elsewhere" },
    "network_mode",
    "services.app.network_mode",
    undefined
  ],
  [
    "network_mode of a service outside",
    { network_mode: "service:nowhere" },
    "network_mode",
    "services.app.network_mode",
    undefined
  ],
  ["pid host", { pid: "host" }, "pid", "services.app.pid", undefined],
  ["ipc host", { ipc: "host" }, "ipc", "services.app.ipc", undefined],
  ["uts host", { uts: "host" }, "uts", "services.app.uts", undefined],
  ["userns_mode host", { userns_mode: "host" }, "userns_mode", "services.app.userns_mode", undefined],
  ["cgroup host", { cgroup: "host" }, "cgroup", "services.app.cgroup", undefined],
  [
    "security_opt other than no-new-privileges",
    { security_opt: ["seccomp:unconfined", "no-new-privileges:true"] },
    "security_opt",
    "services.app.security_opt",
    ["no-new-privileges:true"]
  ],
  [
    "extra_hosts to the host gateway",
    { extra_hosts: ["host.docker.internal:host-gateway", "db.local:10.0.0.2"] },
    "extra_hosts",
    "services.app.extra_hosts[0]",
    ["db.local:10.0.0.2"]
  ],
  [
    "the Docker socket bound in",
    { volumes: ["/var/run/docker.sock:/var/run/docker.sock:rw", "data:/data:rw"] },
    "volumes",
    "services.app.volumes[0]",
    ["data:/data:rw"]
  ],
  [
    "a host folder bound in (long form)",
    { volumes: [{ type: "bind", source: "/home/me/.ssh", target: "/root/.ssh" }] },
    "volumes",
    "services.app.volumes[0]",
    []
  ],
  [
    "a folder beside the repository (a prefix of its name)",
    { volumes: [`${root}-other:/w`] },
    "volumes",
    "services.app.volumes[0]",
    []
  ],
  [
    "a bind inside the repository propagating mounts",
    { volumes: [`${root}/data:/data:rw,rshared`] },
    "volumes",
    "services.app.volumes[0]",
    [`${root}/data:/data:rw`]
  ],
  [
    "a bind inside the repository propagating mounts (long form)",
    {
      volumes: [{ type: "bind", source: root, target: "/w", bind: { propagation: "shared", create_host_path: true } }]
    },
    "volumes",
    "services.app.volumes[0].bind.propagation",
    [{ type: "bind", source: root, target: "/w", bind: { create_host_path: true } }]
  ],
  [
    "a named pipe",
    { volumes: [{ type: "npipe", source: "//./pipe/docker_engine", target: "/p" }] },
    "volumes",
    "services.app.volumes[0]",
    []
  ],
  [
    "volumes_from a container",
    { volumes_from: ["container:other", "db:ro"] },
    "volumes_from",
    "services.app.volumes_from[0]",
    ["db:ro"]
  ],
  [
    "a port on every address (short form)",
    { ports: ["5432:5432"] },
    "ports",
    "services.app.ports[0]",
    ["127.0.0.1:5432:5432"]
  ],
  [
    "a port on every address (long form, as Compose v1 renders it)",
    { ports: [{ published: 6379, target: 6379, protocol: "tcp" }] },
    "ports",
    "services.app.ports[0]",
    ["127.0.0.1:6379:6379/tcp"]
  ],
  ["a port with no host port", { ports: ["9000"] }, "ports", "services.app.ports[0]", ["127.0.0.1::9000"]],
  [
    "a port on another address",
    { ports: ["0.0.0.0:80:80/udp"] },
    "ports",
    "services.app.ports[0]",
    ["127.0.0.1:80:80/udp"]
  ],
  [
    "a log driver reaching out",
    { logging: { driver: "syslog", options: { "syslog-address": "udp://1.2.3.4:514" } } },
    "logging",
    "services.app.logging.driver",
    { driver: "json-file", options: {} }
  ],
  [
    "devices reserved through deploy",
    { deploy: { resources: { reservations: { devices: [{ capabilities: ["gpu"] }], cpus: "1" } } } },
    "deploy",
    "services.app.deploy.resources.reservations.devices",
    { resources: { reservations: { cpus: "1" } } }
  ],
  [
    "an env_file outside the repository",
    { env_file: ["/etc/environment"] },
    "env_file",
    "services.app.env_file[0]",
    []
  ],
  ["blkio_config", { blkio_config: { weight: 300 } }, "blkio_config", "services.app.blkio_config", undefined],
  ["storage_opt", { storage_opt: { size: "1G" } }, "storage_opt", "services.app.storage_opt", undefined],
  ["cpu_rt_runtime", { cpu_rt_runtime: "400ms" }, "cpu_rt_runtime", "services.app.cpu_rt_runtime", undefined],
  [
    "credential_spec",
    { credential_spec: { file: "x.json" } },
    "credential_spec",
    "services.app.credential_spec",
    undefined
  ]
]

describe("checkComposeProject: a setting that widens", () => {
  for (const [name, app, key, property, untrusted] of widening) {
    it.effect(`${name}: left out and listed for an untrusted repository`, () =>
      Effect.gen(function* () {
        const result = yield* check(projectWith(app), "untrusted")
        assert.strictEqual(result._tag, "Success", result._tag === "Failure" ? result.failure.message : "")
        if (result._tag !== "Success") return
        assert.deepStrictEqual(result.success.project.services.app?.[key], untrusted)
        assert.deepStrictEqual(
          result.success.ignored.map((one) => one.property),
          [property]
        )
        assert.isTrue(result.success.ignored[0]?.detail.endsWith(`; ${hint}`))
        assert.include(
          result.success.warnings,
          `${file}: ${property} is left out: ${result.success.ignored[0]?.detail.split("; ")[0]}`
        )
      })
    )
    it.effect(`${name}: kept for a trusted repository`, () =>
      Effect.gen(function* () {
        const result = yield* check(projectWith(app), "trusted")
        assert.strictEqual(result._tag, "Success", result._tag === "Failure" ? result.failure.message : "")
        if (result._tag !== "Success") return
        assert.deepStrictEqual(result.success.project.services.app?.[key], app[key])
        assert.deepStrictEqual(result.success.ignored, [])
      })
    )
    it.effect(`${name}: refused under untrustedWidening "refuse"`, () =>
      Effect.gen(function* () {
        const result = yield* check(projectWith(app), "refuse")
        assert.strictEqual(result._tag, "Failure")
        if (result._tag !== "Failure") return
        assert.strictEqual(result.failure.property, property)
        assert.match(
          result.failure.detail,
          /^refused: it .+, and the repository's content is untrusted; the repository is not trusted/
        )
      })
    )
  }
})

// name, the app service's keys: kept as they are for every repository.
const harmless: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  [
    "a bind inside the repository",
    { volumes: [`${root}:/workspaces/app:cached`, { type: "bind", source: `${root}/.devcontainer`, target: "/c" }] }
  ],
  [
    "named and anonymous volumes, a tmpfs",
    { volumes: ["node_modules:/w/node_modules:rw", "/anon", { type: "tmpfs", target: "/t" }] }
  ],
  ["a port on 127.0.0.1", { ports: ["127.0.0.1:8080:80/tcp", "127.0.0.1::9000"] }],
  ["another service's network, pid and ipc", { network_mode: "service:db", pid: "service:db", ipc: "service:db" }],
  ["volumes_from and links within the project", { volumes_from: ["db:ro", "service:db"], links: ["db:database"] }],
  ["no-new-privileges", { security_opt: ["no-new-privileges:true"] }],
  ["an extra host that is not the host", { extra_hosts: ["db.local:10.0.0.2"] }],
  [
    "the command, environment, user and limits",
    { command: "sleep infinity", environment: { A: "1" }, user: "vscode", mem_limit: "1g", cpus: 2, init: true }
  ],
  ["an env_file inside the repository", { env_file: [`${root}/.env.example`] }],
  ["privileged false and empty cap_add", { privileged: false, cap_add: [] }],
  ["a log driver of the container's own", { logging: { driver: "json-file", options: { "max-size": "10m" } } }]
]

describe("checkComposeProject: settings that widen nothing", () => {
  for (const [name, app] of harmless) {
    it.effect(`${name}: kept for an untrusted repository, nothing listed`, () =>
      Effect.gen(function* () {
        const result = yield* check(projectWith(app), "refuse")
        assert.strictEqual(result._tag, "Success", result._tag === "Failure" ? result.failure.message : "")
        if (result._tag !== "Success") return
        for (const key of Object.keys(app))
          assert.deepStrictEqual(result.success.project.services.app?.[key], app[key], key)
        assert.deepStrictEqual(result.success.ignored, [])
      })
    )
  }
})

// name, the rendered project, the property refused: no repository gets these.
const refusedOutright: ReadonlyArray<readonly [string, unknown, string]> = [
  ["a service key prbox does not know", projectWith({ frobnicate: true }), "services.app.frobnicate"],
  [
    "extends left unresolved",
    projectWith({ extends: { file: "/etc/compose.yml", service: "x" } }),
    "services.app.extends"
  ],
  [
    "a build context outside the repository",
    projectWith({ build: { context: "/home/me" } }),
    "services.app.build.context"
  ],
  [
    "a build context that is a URL",
    projectWith({ build: "https://example.invalid/repo.git" }),
    "services.app.build.context"
  ],
  [
    "a Dockerfile outside the repository",
    projectWith({ build: { context: root, dockerfile: "../../Dockerfile" } }),
    "services.app.build.dockerfile"
  ],
  [
    "an absolute Dockerfile outside",
    projectWith({ build: { context: root, dockerfile: "/etc/Dockerfile" } }),
    "services.app.build.dockerfile"
  ],
  [
    "an inline Dockerfile",
    projectWith({ build: { context: root, dockerfile_inline: "FROM x" } }),
    "services.app.build.dockerfile_inline"
  ],
  [
    "additional build contexts",
    projectWith({ build: { context: root, additional_contexts: { a: "/" } } }),
    "services.app.build.additional_contexts"
  ],
  ["a build key prbox does not know", projectWith({ build: { context: root, frob: 1 } }), "services.app.build.frob"],
  [
    "a mount type prbox does not know",
    projectWith({ volumes: [{ type: "cluster", source: "x", target: "/x" }] }),
    "services.app.volumes[0].type"
  ],
  [
    "a mount option prbox does not know",
    projectWith({ volumes: [{ type: "volume", source: "x", target: "/x", frob: 1 }] }),
    "services.app.volumes[0].frob"
  ],
  ["a port that is not one", projectWith({ ports: ["a:b"] }), "services.app.ports[0]"],
  ["a top-level key prbox does not know", projectWith({}, { include: ["/etc/compose.yml"] }), "include"],
  ["a network key prbox does not know", projectWith({}, { networks: { n: { frob: 1 } } }), "networks.n.frob"],
  ["a service that is not in the project", { services: { web: { image: "x" } } }, "service"]
]

describe("checkComposeProject refuses outright", () => {
  for (const [name, rendered, property] of refusedOutright) {
    it.effect(name, () =>
      Effect.gen(function* () {
        for (const mode of ["untrusted", "trusted"] as const) {
          const result = yield* check(rendered, mode)
          assert.strictEqual(result._tag, "Failure", mode)
          if (result._tag === "Failure") assert.strictEqual(result.failure.property, property, mode)
        }
      })
    )
  }

  it.effect("a runServices entry that is not in the project", () =>
    Effect.gen(function* () {
      const result = yield* check(projectWith({}), "untrusted", { runServices: ["db", "cache"] })
      assert.strictEqual(result._tag, "Failure")
      if (result._tag === "Failure")
        assert.strictEqual(
          result.failure.message,
          `${file}: runServices[1]: names no service of the Compose configuration`
        )
    })
  )

  it.effect("errors never echo a value of the project", () =>
    Effect.gen(function* () {
      const secret = "s3cr3t-value"
      const result = yield* check(projectWith({ frobnicate: secret, build: { context: `/${secret}` } }), "untrusted")
      assert.strictEqual(result._tag, "Failure")
      if (result._tag === "Failure") assert.notInclude(result.failure.message, secret)
    })
  )
})

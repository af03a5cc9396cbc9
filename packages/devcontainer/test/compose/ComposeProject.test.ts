import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { IMAGE_TO_BE_FILLED, parseRenderedCompose } from "../../src/index.ts"
import { check, file, projectWith, root } from "./support.ts"

// The Compose check over the whole project: which services start, the builds
// the engine makes, the top-level networks, volumes, secrets and configs, and
// what no repository gets; then reading what Compose renders.

const chain = {
  services: {
    app: { image: "a", depends_on: { db: { condition: "service_healthy" } } },
    db: { image: "postgres", links: ["cache"] },
    cache: { image: "redis", network_mode: "service:proxy" },
    proxy: { image: "nginx" },
    worker: { image: "w", volumes_from: ["db"] },
    docs: { image: "d" },
    search: { image: "s", profiles: ["search"] }
  }
}

describe("checkComposeProject: the services to start", () => {
  const rows: ReadonlyArray<readonly [string, ReadonlyArray<string> | undefined, ReadonlyArray<string>]> = [
    [
      "without runServices, every service in no profile (as a plain up)",
      undefined,
      ["app", "db", "cache", "proxy", "worker", "docs"]
    ],
    ["a profiled service named in runServices", ["search"], ["app", "db", "cache", "proxy", "search"]],
    [
      "runServices with what they depend on (depends_on, links, network_mode)",
      ["app"],
      ["app", "db", "cache", "proxy"]
    ],
    ["runServices without the service: the service starts too", ["docs"], ["app", "db", "cache", "proxy", "docs"]],
    ["volumes_from counts", ["worker"], ["app", "db", "cache", "proxy", "worker"]]
  ]
  for (const [name, runServices, expected] of rows) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* check(chain, "untrusted", { runServices })
        assert.strictEqual(result._tag, "Success")
        if (result._tag !== "Success") return
        assert.deepStrictEqual(result.success.services, expected)
        assert.deepStrictEqual(Object.keys(result.success.project.services), expected)
      })
    )
  }

  it.effect("a service that is not started is not checked (nor written)", () =>
    Effect.gen(function* () {
      const rendered = { services: { ...chain.services, docs: { image: "d", frobnicate: 1, privileged: true } } }
      const result = yield* check(rendered, "refuse", { runServices: ["app"] })
      assert.strictEqual(result._tag, "Success")
    })
  )
})

describe("checkComposeProject: builds", () => {
  it.effect("a built service gets the engine's image; the build is data, paths repository-relative", () =>
    Effect.gen(function* () {
      const rendered = projectWith({
        image: "named-by-compose",
        build: {
          context: root,
          dockerfile: ".devcontainer/Dockerfile",
          args: { VARIANT: "3.11", EMPTY: "", UNSET: null, NUMBER: 3 },
          target: "dev",
          cache_from: ["x"]
        }
      })
      const result = yield* check(rendered, "untrusted")
      assert.strictEqual(result._tag, "Success")
      if (result._tag !== "Success") return
      assert.deepStrictEqual(result.success.builds, [
        {
          service: "app",
          context: ".",
          dockerfile: ".devcontainer/Dockerfile",
          args: { VARIANT: "3.11", EMPTY: "", NUMBER: "3" },
          target: "dev"
        }
      ])
      assert.deepStrictEqual(result.success.project.services.app, { image: IMAGE_TO_BE_FILLED })
      assert.include(result.success.warnings, "services.app.build: cache_from not used: prbox builds the image itself")
    })
  )

  const contexts: ReadonlyArray<readonly [string, unknown, string, string]> = [
    ["a context string, the default Dockerfile", `${root}/api`, "api", "api/Dockerfile"],
    [
      "a Dockerfile relative to the context",
      { context: `${root}/api`, dockerfile: "../docker/api.Dockerfile" },
      "api",
      "docker/api.Dockerfile"
    ],
    ["an absolute Dockerfile inside", { context: root, dockerfile: `${root}/x/Dockerfile` }, ".", "x/Dockerfile"]
  ]
  for (const [name, build, context, dockerfile] of contexts) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* check(projectWith({ build }), "untrusted")
        assert.strictEqual(result._tag, "Success")
        if (result._tag !== "Success") return
        assert.deepStrictEqual(result.success.builds, [{ service: "app", context, dockerfile, args: {} }])
      })
    )
  }

  const buildWidening: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ["ssh", { ssh: ["default"] }, "services.app.build.ssh"],
    ["secrets", { secrets: ["npmrc"] }, "services.app.build.secrets"],
    ["the host's network", { network: "host" }, "services.app.build.network"],
    ["a privileged build", { privileged: true }, "services.app.build.privileged"],
    ["the host gateway", { extra_hosts: ["h:host-gateway"] }, "services.app.build.extra_hosts"]
  ]
  for (const [name, extra, property] of buildWidening) {
    it.effect(`${name}: left out (untrusted), refused ("refuse"), not applied (trusted)`, () =>
      Effect.gen(function* () {
        const rendered = projectWith({ build: { context: root, ...extra } })
        const untrusted = yield* check(rendered, "untrusted")
        assert.strictEqual(untrusted._tag, "Success")
        if (untrusted._tag === "Success") {
          assert.deepStrictEqual(
            untrusted.success.ignored.map((one) => one.property),
            [property]
          )
          assert.strictEqual(untrusted.success.builds.length, 1)
        }
        const refused = yield* check(rendered, "refuse")
        assert.strictEqual(refused._tag === "Failure" ? refused.failure.property : "opened", property)
        const trusted = yield* check(rendered, "trusted")
        assert.strictEqual(trusted._tag, "Success")
        if (trusted._tag === "Success") {
          assert.deepStrictEqual(trusted.success.ignored, [])
          assert.include(trusted.success.warnings, `${property} is not applied: prbox builds the image itself`)
        }
      })
    )
  }
})

describe("checkComposeProject: the project's networks, volumes, secrets and configs", () => {
  // name, the top level, the property listed, what an untrusted repository gets of that kind.
  const rows: ReadonlyArray<
    readonly [string, Record<string, unknown>, ReadonlyArray<string>, Record<string, unknown>]
  > = [
    [
      "an external network",
      { networks: { shared: { external: true, name: "proxy" } } },
      ["networks.shared.external"],
      { networks: { shared: {} } }
    ],
    [
      "an external volume",
      { volumes: { cache: { external: true } } },
      ["volumes.cache.external"],
      { volumes: { cache: {} } }
    ],
    [
      "a volume with a fixed name",
      { volumes: { data: { name: "someone-elses-data" } } },
      ["volumes.data.name"],
      { volumes: { data: {} } }
    ],
    [
      "a volume binding a host folder through its driver",
      { volumes: { data: { driver: "local", driver_opts: { type: "none", o: "bind", device: "/etc" } } } },
      ["volumes.data.driver_opts"],
      { volumes: { data: { driver: "local" } } }
    ],
    [
      "a network driver reaching the host",
      { networks: { lan: { driver: "macvlan", driver_opts: { parent: "eth0" } } } },
      ["networks.lan.driver", "networks.lan.driver_opts"],
      { networks: { lan: {} } }
    ],
    [
      "a secret file outside the repository",
      { secrets: { key: { file: "/home/me/.ssh/id_ed25519" } } },
      ["secrets.key.file"],
      {}
    ],
    ["an external config", { configs: { c: { external: true } } }, ["configs.c.external"], {}]
  ]
  for (const [name, top, properties, untrusted] of rows) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const rendered = projectWith({ secrets: ["key"], configs: [{ source: "c", target: "/c" }] }, top)
        const result = yield* check(rendered, "untrusted")
        assert.strictEqual(result._tag, "Success", result._tag === "Failure" ? result.failure.message : "")
        if (result._tag !== "Success") return
        const { services: _services, ...rest } = result.success.project
        assert.deepStrictEqual(rest, untrusted)
        assert.deepStrictEqual(
          result.success.ignored.map((one) => one.property),
          properties
        )
        // A secret or config left out is left out of the services that name it too.
        assert.deepStrictEqual(result.success.project.services.app?.secrets, "secrets" in top ? [] : ["key"])
        const trusted = yield* check(rendered, "trusted")
        assert.strictEqual(trusted._tag, "Success")
        if (trusted._tag === "Success")
          assert.deepStrictEqual(trusted.success.project[Object.keys(top)[0] ?? ""], top[Object.keys(top)[0] ?? ""])
      })
    )
  }

  it.effect("Compose v2's names for the project's own networks and volumes are dropped, not listed", () =>
    Effect.gen(function* () {
      const rendered = projectWith(
        {},
        {
          name: "render",
          networks: { default: { name: "render_default" } },
          volumes: { data: { name: "render_data" } }
        }
      )
      const result = yield* check(rendered, "refuse")
      assert.strictEqual(result._tag, "Success")
      if (result._tag === "Success") {
        assert.deepStrictEqual(result.success.project.networks, { default: {} })
        assert.deepStrictEqual(result.success.project.volumes, { data: {} })
        assert.isUndefined(result.success.project.name)
      }
    })
  )
})

describe("checkComposeProject: what no repository gets", () => {
  it.effect("container_name, pull_policy and prbox's or Compose's own labels are dropped with a warning", () =>
    Effect.gen(function* () {
      const rendered = projectWith({
        container_name: "db",
        pull_policy: "always",
        labels: { "dev.prbox.sandbox": "other", "com.docker.compose.project": "x", team: "a" }
      })
      for (const mode of ["untrusted", "trusted"] as const) {
        const result = yield* check(rendered, mode)
        assert.strictEqual(result._tag, "Success")
        if (result._tag !== "Success") continue
        const app = result.success.project.services.app ?? {}
        assert.deepStrictEqual([app.container_name, app.pull_policy, app.labels], [undefined, undefined, { team: "a" }])
        assert.deepStrictEqual(result.success.ignored, [])
        assert.strictEqual(result.success.warnings.length, 3)
      }
    })
  )
})

describe("parseRenderedCompose", () => {
  const rows: ReadonlyArray<readonly [string, string, string | undefined]> = [
    ["YAML as Compose prints it", "services:\n  app:\n    image: x\nversion: '3.8'\n", undefined],
    ["JSON", '{"services":{"app":{"image":"x"}}}', undefined],
    [
      "no services",
      "version: '3'\n",
      "the rendered Compose configuration: expected services: a mapping of service names"
    ],
    ["a list", "- a\n", "the rendered Compose configuration: expected a Compose configuration (a mapping)"],
    [
      "a duplicate key",
      "services:\n  a: {}\n  a: {}\n",
      "the rendered Compose configuration: not valid YAML (duplicate key)"
    ],
    [
      "an alias bomb",
      `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from(
        { length: 12 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(", ")}]`
      ).join("\n")}\nservices: {}\n`,
      "the rendered Compose configuration: not valid YAML (too many aliases)"
    ]
  ]
  for (const [name, text, error] of rows) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* Effect.result(parseRenderedCompose(text))
        if (error === undefined) assert.strictEqual(result._tag, "Success")
        else assert.strictEqual(result._tag === "Failure" ? result.failure.message : "parsed", error)
      })
    )
  }

  it.effect("a text over the bound is refused before parsing", () =>
    Effect.gen(function* () {
      const result = yield* Effect.result(parseRenderedCompose(`services: {}\n#${"x".repeat(5 * 1024 * 1024)}`, file))
      assert.strictEqual(
        result._tag === "Failure" ? result.failure.message : "parsed",
        `${file}: larger than 4194304 bytes`
      )
    })
  )
})

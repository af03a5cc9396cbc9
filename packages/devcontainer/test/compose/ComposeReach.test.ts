import { assert, describe, it } from "@effect/vitest"
import { type ComposeProject, reachableServices } from "@prbox/devcontainer"

const project = (services: Record<string, Record<string, unknown>>): ComposeProject => ({ services })

describe("reachableServices", () => {
  it.each<readonly [string, Record<string, Record<string, unknown>>, ReadonlyArray<string>, unknown]>([
    [
      "every service on the default network, ports and expose merged",
      {
        app: {},
        db: { expose: ["5432"], ports: ["127.0.0.1:15432:5432"] },
        web: { ports: [{ target: 80, published: "8080", host_ip: "127.0.0.1", protocol: "tcp" }, "443/tcp"] }
      },
      ["app", "db", "web"],
      [
        { service: "db", ports: [5432] },
        { service: "web", ports: [80, 443] }
      ]
    ],
    [
      "only the services started, in their order",
      { app: {}, db: {}, cache: {} },
      ["cache", "app"],
      [{ service: "cache", ports: [] }]
    ],
    [
      "a service on none of the app's networks is not reached",
      {
        app: { networks: { front: null } },
        web: { networks: ["front", "back"] },
        db: { networks: { back: { aliases: ["database"] } } },
        cache: {}
      },
      ["app", "web", "db", "cache"],
      [{ service: "web", ports: [] }]
    ],
    [
      "the app on the default network reaches a service declaring it",
      { app: {}, db: { networks: ["default", "back"] } },
      ["app", "db"],
      [{ service: "db", ports: [] }]
    ],
    [
      "a network_mode leaves a service off the project's networks",
      {
        app: {},
        none: { network_mode: "none" },
        bridged: { network_mode: "bridge" },
        sidecar: { network_mode: "service:app" }
      },
      ["app", "none", "bridged", "sidecar"],
      []
    ],
    ["an app with a network_mode reaches none", { app: { network_mode: "none" }, db: {} }, ["app", "db"], []],
    [
      "names previews never dial are left out",
      { app: {}, "host.docker.internal": {}, "172.17.0.1": {}, Db: {}, localhost: {}, ok: {} },
      ["app", "host.docker.internal", "172.17.0.1", "Db", "localhost", "ok"],
      [{ service: "ok", ports: [] }]
    ],
    [
      "UDP, unreadable entries and wide ranges are not listed; small ranges are",
      {
        app: {},
        db: {
          ports: ["127.0.0.1::53/udp", "127.0.0.1:8000-8002:9000-9002", { target: 7000, protocol: "udp" }, {}, null],
          expose: ["6000-7000", 3000, "x", "3001/tcp", "0", "70000"]
        }
      },
      ["app", "db"],
      [{ service: "db", ports: [3000, 3001, 9000, 9001, 9002] }]
    ]
  ])("%s", (_, services, started, expected) => {
    assert.deepStrictEqual(reachableServices(project(services), "app", started), expected)
  })
})

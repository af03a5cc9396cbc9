import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import type { SandboxId } from "@prbox/domain"
import { Effect } from "effect"
import { databaseImage } from "../../../scripts/images/database.ts"
import { ensureImage } from "../../../scripts/images/images.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { Previews, SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { bounded, containersOf, openRunning, withEngine } from "./harness.ts"
import { exchange } from "./relay-support.ts"

/**
 * Previews of a Compose sandbox's other services on the real engine: the app
 * service (prbox's default image) reaches the database (redis-server from
 * Debian's packages) by its service name, and so does a preview of it. Only
 * the services the host recorded when it made the sandbox are dialled.
 */
const databaseTag = Effect.tryPromise(() => ensureImage(databaseImage))

const pushPr = (remote: string, pr: number, db: string) =>
  pushPullRequest(remote, pr, {
    ".devcontainer/devcontainer.json": JSON.stringify({
      dockerComposeFile: "docker-compose.yml",
      service: "app",
      workspaceFolder: "/workspaces/app",
      forwardPorts: [3000, "db:6379"],
      portsAttributes: { "db:6379": { label: "Redis" } }
    }),
    ".devcontainer/docker-compose.yml": [
      "services:",
      "  app:",
      `    image: ${DefaultImage.DEFAULT_IMAGE}`,
      "    command: sleep infinity",
      "    depends_on: [db]",
      "  db:",
      `    image: ${db}`,
      '    expose: ["6379", "6380"]',
      ""
    ].join("\n")
  })

/** The gateway of the database's network: the Docker host, as the containers see it. */
const gatewayOf = (containerId: string): string =>
  execFileSync(
    "docker",
    ["inspect", "--format", "{{range .NetworkSettings.Networks}}{{.Gateway}}{{end}}", containerId],
    { encoding: "utf8" }
  ).trim()

describe("previews of a Compose sandbox's other services", () => {
  it.live(
    "reach the database by its service name; list its ports; refuse any other name before a dial",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          pushPr(remote.path, 1, yield* databaseTag)
          const row = yield* openRunning(remote.path, 1)
          const id: SandboxId = row.id
          const previews = yield* Previews
          const app = row.containerId ?? assert.fail("no container")
          const database = containersOf(id, { all: false }).find((one) => one !== app) ?? assert.fail("no database")

          // RESP over the preview's byte stream, dialled by the app's container at db:6379.
          const pong = yield* exchange(yield* previews.connect(id, 6379, "db"), "PING\r\n")
          assert.strictEqual(pong, "+PONG\r\n")

          // Listed: forwardPorts' "db:6379" first (its label), then the service's own expose; the app's 3000 as ever.
          const listed = yield* previews.ports(id)
          const services = listed.filter((port) => port.service !== undefined)
          assert.deepStrictEqual(
            services.map((port) => [port.service, port.port, port.source, port.label, port.listening]),
            [
              ["db", 6379, "devcontainer", "Redis", true],
              ["db", 6380, "compose", null, false]
            ]
          )
          assert.isTrue(listed.some((port) => port.port === 3000 && port.service === undefined))
          const closed = yield* Effect.flip(previews.connect(id, 6380, "db"))
          assert.strictEqual(closed._tag, "PortClosed")
          assert.include(closed.message, "port 6380 of service db")

          // Not a service the app reaches: refused by the host's record, before the relay is asked.
          const hostile = [
            "cache",
            "app",
            "host.docker.internal",
            gatewayOf(database),
            "127.0.0.1",
            "localhost",
            "db.",
            "db:6379",
            "[::1]",
            // Another sandbox's service by its container's name.
            "prbox-zzz999yyy888-db-1"
          ]
          for (const name of hostile) {
            const refused = yield* Effect.flip(previews.connect(id, 6379, name))
            assert.strictEqual(refused._tag, "UnknownService", `${name}: ${refused.message}`)
          }
          const unknown = yield* Effect.flip(previews.connect(id, 6379, "cache"))
          assert.strictEqual(
            unknown.message,
            `sandbox ${id} has no service "cache" to preview: the app reaches only db by name`
          )

          // A public port of the app is not the service's: each is opened on its own.
          yield* previews.setPublic(id, 6379, true)
          assert.isFalse(yield* previews.isPublic(id, 6379, "db"))
          yield* previews.setPublic(id, 6379, true, "db")
          assert.isTrue(yield* previews.isPublic(id, 6379, "db"))
          const publicRefused = yield* Effect.flip(previews.setPublic(id, 6379, true, "cache"))
          assert.strictEqual(publicRefused._tag, "UnknownService")

          yield* Effect.flatMap(SandboxService, (sandboxes) => sandboxes.delete(id))
        }).pipe(bounded("compose previews", 240))
      ),
    // A Compose project (two containers) made, probed and removed: past the default on a loaded machine.
    300_000
  )
})

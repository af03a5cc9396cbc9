import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { databaseImage } from "../../../scripts/images/database.ts"
import { ensureImage } from "../../../scripts/images/images.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { Reconciler, SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { containersOf, inspectContainer, openRunning, withEngine } from "./harness.ts"
import { inContainer } from "./user-image.ts"

/**
 * A Docker Compose devcontainer on the real engine, through Debian's
 * docker-compose: an app service (prbox's default image) and a database
 * service (redis-server from Debian's packages, scripts/images/database.ts)
 * as one sandbox. The app's postCreateCommand reaches the database by its
 * service name; every lifecycle operation covers both containers.
 */
const databaseTag = Effect.tryPromise(() => ensureImage(databaseImage))

/** A variable of the daemon's environment the Compose file names: never interpolated into a container. */
const HOST_VARIABLE = "PRBOX_COMPOSE_TEST_HOST_VALUE"

const networksOf = (sandboxId: string): Array<string> =>
  execFileSync("docker", ["network", "ls", "-q", "--filter", `label=dev.prbox.sandbox=${sandboxId}`], {
    encoding: "utf8"
  })
    .split("\n")
    .filter((line) => line.length > 0)

const serviceOf = (containerId: string): string =>
  inspectContainer(containerId).Config.Labels["com.docker.compose.service"] ?? ""

// Talks RESP over bash's /dev/tcp: the app image has no redis client, and needs none.
const POST_CREATE = [
  "exec 3<>/dev/tcp/db/6379",
  `printf '*3\\r\\n$3\\r\\nSET\\r\\n$8\\r\\nfrom-app\\r\\n$4\\r\\nseen\\r\\n' >&3`,
  "read -r answer <&3",
  'echo "$answer" > /tmp/db-answer'
].join("; ")

const pushComposePr = (remote: string, pr: number, db: string) =>
  pushPullRequest(remote, pr, {
    ".devcontainer/devcontainer.json": JSON.stringify({
      dockerComposeFile: "docker-compose.yml",
      service: "app",
      workspaceFolder: "/workspaces/app",
      postCreateCommand: ["bash", "-c", POST_CREATE]
    }),
    ".devcontainer/docker-compose.yml": [
      "services:",
      "  app:",
      `    image: ${DefaultImage.DEFAULT_IMAGE}`,
      "    command: sleep infinity",
      "    environment:",
      `      FROM_HOST: \${${HOST_VARIABLE}:-not-interpolated}`,
      "    depends_on: [db]",
      "  db:",
      `    image: ${db}`,
      // Widening an untrusted PR asks for: left out, and shown.
      "    privileged: true",
      ""
    ].join("\n")
  })

describe("a Docker Compose devcontainer", () => {
  it.live(
    "opens as one sandbox: the app reaches its database by name; stop, restart and rm cover every container",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          const db = yield* databaseTag
          process.env[HOST_VARIABLE] = "host-value-leaked"
          pushComposePr(remote.path, 1, db)
          const row = yield* openRunning(remote.path, 1).pipe(
            Effect.ensuring(Effect.sync(() => delete process.env[HOST_VARIABLE]))
          )
          const app = row.containerId ?? assert.fail("no container")
          const all = containersOf(row.id, { all: true })
          assert.strictEqual(all.length, 2)
          assert.strictEqual(serviceOf(app), "app")
          const database = all.find((id) => id !== app) ?? assert.fail("no database container")
          assert.strictEqual(serviceOf(database), "db")
          // The app's postCreateCommand reached redis by its service name, and redis holds what it wrote.
          assert.strictEqual(inContainer(app, "cat /tmp/db-answer").trim(), "+OK")
          assert.strictEqual(inContainer(database, "redis-cli GET from-app"), "seen")
          // The host's variable is not the container's; the database left unprivileged, and said so.
          assert.strictEqual(inContainer(app, "printenv FROM_HOST"), "not-interpolated")
          assert.isFalse(inspectContainer(database).HostConfig.Privileged)
          const ignored = (row.environment?.ignored ?? []).map((left) => left.property)
          assert.include(ignored, "services.db.privileged")
          // code-server on the sandbox's port, on 127.0.0.1 only.
          const bindings = Object.values(inspectContainer(app).HostConfig.PortBindings).flat()
          assert.isTrue(bindings.every((binding) => binding.HostIp === "127.0.0.1"))
          assert.isTrue(bindings.some((binding) => binding.HostPort === String(row.hostPort)))

          // Reconcile's drift pass leaves a running sandbox's other services running.
          yield* Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
          assert.sameMembers(containersOf(row.id, { all: false }), all)

          const sandboxes = yield* SandboxService
          yield* sandboxes.stop(row.id)
          assert.deepStrictEqual(containersOf(row.id, { all: false }), [])
          assert.strictEqual(containersOf(row.id, { all: true }).length, 2)

          yield* sandboxes.restart(row.id)
          yield* sandboxes.awaitIdle(row.id)
          assert.sameMembers(containersOf(row.id, { all: false }), all)
          assert.strictEqual(inContainer(database, "redis-cli PING"), "PONG")

          // A rebuild makes the whole project again: two new containers, the database reached again.
          yield* sandboxes.rebuild(row.id)
          yield* sandboxes.awaitIdle(row.id)
          const afterRebuild = yield* sandboxes.get(row.id)
          assert.strictEqual(afterRebuild.status, "running", afterRebuild.error ?? "")
          const rebuilt = containersOf(row.id, { all: true })
          assert.strictEqual(rebuilt.length, 2)
          assert.lengthOf(
            rebuilt.filter((id) => all.includes(id)),
            0
          )
          assert.sameMembers(containersOf(row.id, { all: false }), rebuilt)

          yield* sandboxes.delete(row.id)
          assert.deepStrictEqual(containersOf(row.id, { all: true }), [])
          assert.deepStrictEqual(networksOf(row.id), [])
        })
      ),
    // An open, a stop, a restart and a rebuild of a two-service project: Compose's own work passes 60 s on a loaded machine.
    300_000
  )

  it.live("with untrustedWidening refuse, a service's widening refuses the sandbox, naming the property", () =>
    withEngine({ config: { untrustedWidening: "refuse" } }, ({ remote }) =>
      Effect.gen(function* () {
        pushComposePr(remote.path, 2, yield* databaseTag)
        const sandboxes = yield* SandboxService
        // Refused when the project is checked, after admission: the row says why, and no container was made.
        const opened = yield* sandboxes.open({ input: remote.path, pr: 2 })
        yield* sandboxes.awaitIdle(opened.id)
        const rows = yield* sandboxes.listAll
        assert.strictEqual(rows[0]?.status, "error")
        const reason = rows[0]?.error ?? ""
        assert.include(reason, "privileged")
        assert.deepStrictEqual(
          rows.flatMap((row) => containersOf(row.id, { all: true })),
          []
        )
      })
    )
  )

  it.live("an env_file naming a file of the host is refused before Compose reads it", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.gen(function* () {
        const secret = join(home, "host-secret.env")
        writeFileSync(secret, "LEAKED=host-file-content\n")
        pushPullRequest(remote.path, 3, {
          ".devcontainer/devcontainer.json": JSON.stringify({
            dockerComposeFile: "docker-compose.yml",
            service: "app"
          }),
          ".devcontainer/docker-compose.yml": [
            "services:",
            "  app:",
            `    image: ${DefaultImage.DEFAULT_IMAGE}`,
            `    env_file: ${secret}`,
            ""
          ].join("\n")
        })
        const sandboxes = yield* SandboxService
        const opened = yield* sandboxes.open({ input: remote.path, pr: 3 })
        yield* sandboxes.awaitIdle(opened.id)
        const row = yield* sandboxes.get(opened.id)
        assert.strictEqual(row.status, "error")
        assert.include(row.error ?? "", "env_file")
        assert.notInclude(row.error ?? "", "host-file-content")
        assert.deepStrictEqual(containersOf(row.id, { all: true }), [])
      })
    )
  )

  it.live("shutdownAction none is read, listed as ignored and warned of once; stop still stops the database", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const db = yield* databaseTag
        pushPullRequest(remote.path, 4, {
          ".devcontainer/devcontainer.json": JSON.stringify({
            dockerComposeFile: "docker-compose.yml",
            service: "app",
            shutdownAction: "none"
          }),
          ".devcontainer/docker-compose.yml": [
            "services:",
            "  app:",
            `    image: ${DefaultImage.DEFAULT_IMAGE}`,
            "    command: sleep infinity",
            "    depends_on: [db]",
            "  db:",
            `    image: ${db}`,
            ""
          ].join("\n")
        })
        const row = yield* openRunning(remote.path, 4)
        assert.strictEqual(containersOf(row.id, { all: false }).length, 2)
        assert.deepInclude(row.environment?.ignored ?? [], {
          property: "shutdownAction",
          detail: "none: prbox stops the whole project on stop and idle"
        })
        const sandboxes = yield* SandboxService
        const lines = (yield* sandboxes.logs(row.id, { limit: 10_000 })).flatMap((event) =>
          event._tag === "Progress" ? [event.line] : []
        )
        assert.lengthOf(
          lines.filter(
            (line) => line === "warning: shutdownAction none: prbox stops the whole project on stop and idle"
          ),
          1
        )
        yield* sandboxes.stop(row.id)
        assert.deepStrictEqual(containersOf(row.id, { all: false }), [])
        assert.strictEqual(containersOf(row.id, { all: true }).length, 2)
        yield* sandboxes.delete(row.id)
      })
    )
  )

  it.live("reconcile stops a stopped sandbox's database that runs again (a daemon that died mid-stop)", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        pushComposePr(remote.path, 5, yield* databaseTag)
        const row = yield* openRunning(remote.path, 5)
        const sandboxes = yield* SandboxService
        yield* sandboxes.stop(row.id)
        assert.deepStrictEqual(containersOf(row.id, { all: false }), [])
        const database =
          containersOf(row.id, { all: true }).find((id) => id !== row.containerId) ?? assert.fail("no database")
        execFileSync("docker", ["start", database])
        assert.deepStrictEqual(containersOf(row.id, { all: false }), [database])
        yield* Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
        assert.deepStrictEqual(containersOf(row.id, { all: false }), [])
        assert.strictEqual((yield* sandboxes.get(row.id)).status, "stopped")
        yield* sandboxes.delete(row.id)
      })
    )
  )
})

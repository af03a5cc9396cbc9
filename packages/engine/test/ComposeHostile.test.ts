import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { containersOf, inspectContainer, openRunning, withEngine } from "./harness.ts"
import { inContainer } from "./user-image.ts"

/**
 * A hostile Compose project on the real engine: one service binds a folder
 * of the repository, another binds a file inside it. Docker resolves a bind's
 * source on the host at every start, links included, so the first service
 * tries to swap the file for a link to a host file before the sandbox is
 * restarted. The host shows nothing happened: the folder is read-only, the
 * second service still sees the repository's file.
 */
const serviceContainer = (sandboxId: string, service: string) =>
  containersOf(sandboxId, { all: true }).find(
    (id) => inspectContainer(id).Config.Labels["com.docker.compose.service"] === service
  ) ?? assert.fail(`no ${service} container`)

/** The writer's attempt has ended (its marker is there): a latch on state, not a sleep. */
const attempted = (container: string) =>
  Effect.try(() => inContainer(container, "cat /tmp/attempted")).pipe(
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 100 })
  )

describe("a hostile Docker Compose project", () => {
  it.live("a service cannot turn another service's bind into a host file across a restart", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.gen(function* () {
        const secret = join(home, "host-secret")
        writeFileSync(secret, "host-secret-content\n")
        const plant = `rm -f /data/conf && ln -s ${secret} /data/conf; echo done > /tmp/attempted; exec sleep infinity`
        pushPullRequest(remote.path, 1, {
          ".devcontainer/devcontainer.json": JSON.stringify({
            dockerComposeFile: "docker-compose.yml",
            service: "app"
          }),
          ".devcontainer/data/conf": "repository-content\n",
          ".devcontainer/docker-compose.yml": [
            "services:",
            "  app:",
            `    image: ${DefaultImage.DEFAULT_IMAGE}`,
            "    command: sleep infinity",
            "    init: true",
            "  writer:",
            `    image: ${DefaultImage.DEFAULT_IMAGE}`,
            "    volumes: ['./data:/data']",
            "    init: true",
            `    command: ["sh", "-c", ${JSON.stringify(plant.replaceAll("$", "$$"))}]`,
            "  reader:",
            `    image: ${DefaultImage.DEFAULT_IMAGE}`,
            "    volumes: ['./data/conf:/conf:ro']",
            "    command: sleep infinity",
            "    init: true",
            ""
          ].join("\n")
        })
        const row = yield* openRunning(remote.path, 1)
        const writer = serviceContainer(row.id, "writer")
        yield* attempted(writer)
        const sandboxes = yield* SandboxService
        yield* sandboxes.stop(row.id)
        yield* sandboxes.restart(row.id)
        yield* sandboxes.awaitIdle(row.id)
        const reader = serviceContainer(row.id, "reader")
        assert.strictEqual(inContainer(reader, "cat /conf"), "repository-content")
        assert.isTrue(
          inspectContainer(writer).Mounts.some((mount) => mount.Destination === "/data" && mount.RW === false),
          "the folder holding another bind's source is mounted read-only"
        )
        // prbox's copy of the project lives in the sandbox's own folder, and goes with it.
        assert.isTrue(existsSync(join(home, "sandboxes", row.id, "sealed", "compose", "repository")))
        yield* sandboxes.delete(row.id)
        assert.isFalse(existsSync(join(home, "sandboxes", row.id)))
      })
    )
  )
})

import { execFileSync, spawn } from "node:child_process"
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { inject } from "vitest"
import { databaseImage } from "../../../scripts/images/database.ts"
import { ensureImage } from "../../../scripts/images/images.ts"
import { makeRemote, pushPullRequest } from "../../git/test/helpers.ts"
import { Reconciler, SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { CHILD_ENV, PULL_REQUEST } from "./crash/phases.ts"
import { engineLayer } from "./engine-layer.ts"
import { bounded } from "./harness.ts"

/**
 * Guarantee 5 for a Docker Compose sandbox: the daemon is killed with
 * SIGKILL while Compose's `up` holds, its containers made but the
 * sandbox's container not yet recorded. A docker-compose on the child's
 * PATH runs the real one, then announces itself through a FIFO (the latch:
 * the test reads it) and stops itself. A fresh engine then reconciles: no
 * container of the project runs or lacks its sandbox's row, and removing
 * the sandbox leaves no container and no network.
 */
const CHILD = fileURLToPath(new URL("./crash/compose-child.ts", import.meta.url))

const dockerLines = (...args: ReadonlyArray<string>): Array<string> =>
  execFileSync("docker", args, { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

describe("a kill -9 of the daemon mid-`up` of a Compose sandbox", () => {
  it.live("leaves no service container without its sandbox, and rm removes the whole project", () =>
    Effect.gen(function* () {
      const db = yield* Effect.tryPromise(() => ensureImage(databaseImage))
      const home = realpathSync(mkdtempSync(join(tmpdir(), "prbox-compose-crash-")))
      const cleanup = Effect.sync(() => {
        const left = dockerLines("ps", "-aq", "--filter", `label=dev.prbox.home=${home}`)
        if (left.length > 0) execFileSync("docker", ["rm", "-f", "-v", ...left], { stdio: "ignore" })
        const networks = dockerLines("network", "ls", "-q", "--filter", `label=dev.prbox.home=${home}`)
        if (networks.length > 0) execFileSync("docker", ["network", "rm", ...networks], { stdio: "ignore" })
        rmSync(home, { recursive: true, force: true })
      })
      yield* Effect.addFinalizer(() => cleanup)
      const remote = makeRemote(home)
      pushPullRequest(remote.path, PULL_REQUEST, {
        ".devcontainer/devcontainer.json": JSON.stringify({
          dockerComposeFile: "docker-compose.yml",
          service: "app",
          workspaceFolder: "/workspaces/app"
        }),
        ".devcontainer/docker-compose.yml": [
          "services:",
          "  app:",
          `    image: ${DefaultImage.DEFAULT_IMAGE}`,
          "    depends_on: [db]",
          "  db:",
          `    image: ${db}`,
          ""
        ].join("\n")
      })
      // The latch: a FIFO the shim writes its pid to once the real `up` made the containers.
      const shims = join(home, "shims")
      const latch = join(home, "up-done")
      execFileSync("mkdir", [shims])
      execFileSync("mkfifo", [latch])
      const shim = join(shims, "docker-compose")
      writeFileSync(
        shim,
        [
          "#!/bin/sh",
          'case " $* " in',
          `  *" up "*) /usr/bin/docker-compose "$@"; echo "$$" > '${latch}'; kill -STOP "$$" ;;`,
          '  *) exec /usr/bin/docker-compose "$@" ;;',
          "esac",
          ""
        ].join("\n")
      )
      chmodSync(shim, 0o755)
      const child = spawn(process.execPath, [CHILD], {
        env: {
          ...process.env,
          PATH: `${shims}:${process.env.PATH ?? ""}`,
          [CHILD_ENV.home]: home,
          [CHILD_ENV.remote]: remote.path,
          [CHILD_ENV.runId]: inject("testRunId")
        },
        stdio: ["ignore", "ignore", "inherit"]
      })
      const exited = new Promise((resolve) => child.once("exit", resolve))
      // Opening the FIFO for reading blocks until the shim writes: no timing is guessed.
      const shimPid = yield* Effect.tryPromise(() =>
        import("node:fs/promises").then((fs) => fs.readFile(latch, "utf8"))
      ).pipe(bounded("docker-compose up under the daemon", 180))
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited)
      process.kill(Number(shimPid.trim()), "SIGKILL")

      // What the kill left: the project's containers, made, none started; the row not pointing at any.
      const made = dockerLines("ps", "-a", "--no-trunc", "-q", "--filter", `label=dev.prbox.home=${home}`)
      assert.strictEqual(made.length, 2)

      yield* Effect.gen(function* () {
        yield* Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
        const sandboxes = yield* SandboxService
        const [row, ...more] = yield* sandboxes.listAll
        assert.isDefined(row)
        assert.lengthOf(more, 0)
        if (row === undefined) return
        assert.strictEqual(row.status, "error")
        // Every container of the project carries the sandbox's id, and none runs.
        for (const id of made) {
          const labels = JSON.parse(
            execFileSync("docker", ["inspect", "--format", "{{json .Config.Labels}}", id], { encoding: "utf8" })
          ) as Record<string, string>
          assert.strictEqual(labels["dev.prbox.sandbox"], row.id)
        }
        assert.deepStrictEqual(dockerLines("ps", "-q", "--filter", `label=dev.prbox.home=${home}`), [])
        yield* sandboxes.delete(row.id)
        assert.deepStrictEqual(dockerLines("ps", "-aq", "--filter", `label=dev.prbox.home=${home}`), [])
        assert.deepStrictEqual(dockerLines("network", "ls", "-q", "--filter", `label=dev.prbox.sandbox=${row.id}`), [])
      }).pipe(Effect.provide(engineLayer({ home, runId: inject("testRunId"), config: {} })))
    }).pipe(Effect.scoped)
  )
})

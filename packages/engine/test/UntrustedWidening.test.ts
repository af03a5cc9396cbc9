import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { containersOf, healthzTag, inspectContainer, openSettled, withEngine } from "./harness.ts"

/**
 * An untrusted PR that asks for widening opens without it, on the real
 * engine: the container shows none of it, the row lists each setting left
 * out, and what widens nothing (harmless flags, named volumes) is applied.
 * The image is the healthz stand-in: it brings its own code-server.
 */

interface Inspected {
  readonly Config: { readonly Hostname: string; readonly Env: ReadonlyArray<string> | null }
  readonly HostConfig: {
    readonly Privileged: boolean
    readonly CapAdd: ReadonlyArray<string> | null
    readonly ExtraHosts: ReadonlyArray<string> | null
    readonly SecurityOpt: ReadonlyArray<string> | null
    readonly Init: boolean | null
    readonly ShmSize: number
  }
  readonly Mounts: ReadonlyArray<{
    readonly Type: string
    readonly Name?: string
    readonly Source: string
    readonly Destination: string
  }>
}

const inspect = (containerId: string): Inspected => inspectContainer(containerId) as unknown as Inspected

const volumesOf = (sandboxId: string): Array<string> =>
  execFileSync("docker", ["volume", "ls", "-q", "--filter", `label=dev.prbox.sandbox=${sandboxId}`], {
    encoding: "utf8"
  })
    .split("\n")
    .filter((name) => name.length > 0)
    .sort()

const volumeLabels = (name: string): Record<string, string> =>
  JSON.parse(execFileSync("docker", ["volume", "inspect", "--format", "{{json .Labels}}", name], { encoding: "utf8" }))

const asksForEverything = JSON.stringify({
  image: healthzTag,
  privileged: true,
  capAdd: ["SYS_ADMIN"],
  mounts: [
    "source=/etc,target=/host-etc,type=bind",
    "source=cache,target=/cache,type=volume",
    { type: "volume", target: "/scratch" }
  ],
  runArgs: [
    "--add-host=host.docker.internal:host-gateway",
    "--add-host",
    "api.local:10.1.2.3",
    "--init",
    "--security-opt=no-new-privileges",
    "--hostname",
    "review",
    "--name",
    "mine",
    "-e",
    "FROM_RUN_ARGS=yes",
    "--shm-size=128m"
  ]
})

describe("an untrusted PR's widening", () => {
  it.live(
    "is left out and listed; the sandbox opens with what widens nothing, and its volumes go with it",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 71, { ".devcontainer/devcontainer.json": asksForEverything })
          const row = yield* openSettled(remote.path, 71)
          assert.strictEqual(row.status, "running", row.error ?? "")
          const id = row.containerId ?? assert.fail("no container")
          const info = inspect(id)

          // None of the widening.
          assert.isFalse(info.HostConfig.Privileged)
          assert.notInclude(info.HostConfig.CapAdd ?? [], "SYS_ADMIN")
          assert.notInclude(info.HostConfig.CapAdd ?? [], "CAP_SYS_ADMIN")
          assert.isUndefined(info.Mounts.find((mount) => mount.Destination === "/host-etc"))
          assert.isUndefined(info.Mounts.find((mount) => mount.Source === "/etc"))
          assert.isFalse((info.HostConfig.ExtraHosts ?? []).some((entry) => entry.startsWith("host.docker.internal")))

          // What widens nothing is applied.
          assert.include(info.HostConfig.ExtraHosts ?? [], "api.local:10.1.2.3")
          assert.isTrue(info.HostConfig.Init)
          assert.include(info.HostConfig.SecurityOpt ?? [], "no-new-privileges")
          assert.strictEqual(info.Config.Hostname, "review")
          assert.include(info.Config.Env ?? [], "FROM_RUN_ARGS=yes")
          assert.strictEqual(info.HostConfig.ShmSize, 128 * 1024 * 1024)

          // The row says what was left out and which trustedRepositories entry would honour it.
          const entry = `"local${remote.path}"`
          const ignored = row.environment?.ignored ?? []
          assert.deepStrictEqual(
            ignored.map((left) => left.property),
            ["runArgs[0]", "privileged", "capAdd", "mounts[0]"]
          )
          for (const left of ignored) assert.include(left.detail, `adding ${entry} to trustedRepositories`)
          const lines = (yield* SandboxService.use((s) => s.logs(row.id, { limit: 1000 }))).flatMap((event) =>
            event._tag === "Progress" ? [event.line] : []
          )
          for (const property of ["runArgs[0]", "privileged", "capAdd", "mounts[0]"]) {
            assert.isTrue(
              lines.some((line) => line.includes(`${property} is left out`) && line.includes(entry)),
              `no log line for ${property}:\n${lines.join("\n")}`
            )
          }
          assert.isTrue(lines.some((line) => line.includes("--name is ignored")))

          // Named and anonymous volumes are the sandbox's own: labelled as it is, mounted where asked.
          const names = [`prbox-${row.id}-anonymous-0`, `prbox-${row.id}-volume-cache`]
          assert.deepStrictEqual(volumesOf(row.id), names)
          for (const name of names) {
            const labels = volumeLabels(name)
            assert.strictEqual(labels["dev.prbox.sandbox"], row.id)
            assert.isDefined(labels[TEST_RUN_LABEL])
          }
          assert.strictEqual(info.Mounts.find((mount) => mount.Destination === "/cache")?.Name, names[1])
          assert.strictEqual(info.Mounts.find((mount) => mount.Destination === "/scratch")?.Name, names[0])

          // Removing the sandbox removes its volumes.
          yield* SandboxService.use((s) => s.delete(row.id))
          assert.deepStrictEqual(containersOf(row.id, { all: true }), [])
          assert.deepStrictEqual(volumesOf(row.id), [])
        })
      ),
    180_000
  )

  it.live('with "untrustedWidening": "refuse", is refused at open: no row, no container', () =>
    withEngine({ config: { untrustedWidening: "refuse" } }, ({ remote, home }) =>
      Effect.gen(function* () {
        pushPullRequest(remote.path, 72, { ".devcontainer/devcontainer.json": asksForEverything })
        const sandboxes = yield* SandboxService
        const error = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 72 }))
        assert.strictEqual(error._tag, "InvalidDevcontainer", error.message)
        assert.strictEqual(
          error.message,
          `.devcontainer/devcontainer.json: runArgs: refused: it widens the container, and the repository's content is untrusted; to allow it, add "local${remote.path}" to trustedRepositories in your config.json`
        )
        assert.deepStrictEqual(yield* sandboxes.listAll, [])
        assert.deepStrictEqual(
          execFileSync("docker", ["ps", "-aq", "--filter", `label=dev.prbox.home=${home}`], { encoding: "utf8" }),
          ""
        )
      })
    )
  )
})

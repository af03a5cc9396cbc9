import { assert, describe, it } from "@effect/vitest"
import type { SandboxId } from "@prbox/domain"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { openRunning, withEngine } from "./harness.ts"
import { inContainer } from "./user-image.ts"

/**
 * What VS Code reads, opened end to end: JSONC it recovers from, the legacy
 * `dockerFile`/`context` keys, `${devcontainerId}` and the other variables,
 * `hostRequirements.gpu`.
 */
const base = DefaultImage.DEFAULT_IMAGE

const logLines = (id: SandboxId) =>
  SandboxService.use((sandboxes) => sandboxes.logs(id, { limit: 1000 })).pipe(
    Effect.map((events) => events.flatMap((event) => (event._tag === "Progress" ? [event.line] : [])))
  )

describe("what VS Code reads", () => {
  it.live(
    "JSONC VS Code recovers from opens (a second object after the first: the first counts), the log naming line:column",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 1, {
            ".devcontainer/devcontainer.json": `{\n  "image": "${base}",\n  "containerEnv": { "FROM": "first" }\n}\n{ "containerEnv": { "FROM": "second" }\n`
          })
          const row = yield* openRunning(remote.path, 1)
          assert.strictEqual(inContainer(row.containerId ?? "", 'echo "$FROM"'), "first")
          const lines = yield* logLines(row.id)
          assert.include(
            lines,
            "warning: .devcontainer/devcontainer.json:5:1: EndOfFileExpected (recovered as VS Code does)",
            lines.join("\n")
          )
        })
      )
  )

  it.live(
    "the legacy dockerFile and context: a Dockerfile above .devcontainer, and one with the repository as context",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 2, {
            // No context: the CLI builds in the Dockerfile's folder, where its COPY finds the file.
            ".devcontainer/devcontainer.json": JSON.stringify({ dockerFile: "../docker/Dockerfile" }),
            "docker/Dockerfile": `FROM ${base}\nCOPY beside.txt /etc/beside.txt\n`,
            "docker/beside.txt": "beside the Dockerfile\n"
          })
          const beside = yield* openRunning(remote.path, 2)
          assert.strictEqual(inContainer(beside.containerId ?? "", "cat /etc/beside.txt"), "beside the Dockerfile")
          pushPullRequest(remote.path, 3, {
            ".devcontainer/devcontainer.json": JSON.stringify({ dockerFile: "Dockerfile", context: ".." }),
            ".devcontainer/Dockerfile": `FROM ${base}\nCOPY top.txt /etc/top.txt\n`,
            "top.txt": "from the repository's root\n"
          })
          const root = yield* openRunning(remote.path, 3)
          assert.strictEqual(inContainer(root.containerId ?? "", "cat /etc/top.txt"), "from the repository's root")
        })
      )
  )

  it.live(
    `variables: \${devcontainerId} is the sandbox's (52 characters, kept by a rebuild); gpu is a warning`,
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 4, {
            ".devcontainer/devcontainer.json": JSON.stringify({
              image: base,
              workspaceFolder: `/workspaces/\${localWorkspaceFolderBasename}-ws`,
              containerEnv: {
                ID: `\${devcontainerId}`,
                BASE: `\${containerWorkspaceFolderBasename}`,
                HOST_HOME: `\${localEnv:HOME:none}`
              },
              hostRequirements: { gpu: true }
            })
          })
          const row = yield* openRunning(remote.path, 4)
          const env = (id: string) => inContainer(id, 'echo "$ID $BASE $HOST_HOME"').split(" ")
          const [id = "", basename, hostHome] = env(row.containerId ?? "")
          assert.match(id, /^[0-9a-v]{52}$/)
          assert.strictEqual(basename, `${row.environmentPlan?.workspaceFolder.split("/").at(-1)}`)
          assert.match(basename ?? "", /-ws$/)
          assert.strictEqual(hostHome, "none")
          const lines = yield* logLines(row.id)
          assert.isTrue(
            lines.some((line) => line.startsWith("warning: hostRequirements.gpu: prbox gives a sandbox no GPU"))
          )
          // Another sandbox has another id; a rebuild of this one keeps its own.
          pushPullRequest(remote.path, 5, {
            ".devcontainer/devcontainer.json": JSON.stringify({
              image: base,
              containerEnv: { ID: `\${devcontainerId}` }
            })
          })
          const other = yield* openRunning(remote.path, 5)
          assert.notStrictEqual(env(other.containerId ?? "")[0], id)
          const rebuilt = yield* SandboxService.use((sandboxes) => sandboxes.rebuild(row.id))
          yield* SandboxService.use((sandboxes) => sandboxes.awaitIdle(rebuilt.id))
          const after = yield* openRunning(remote.path, 4)
          assert.notStrictEqual(after.containerId, row.containerId)
          assert.strictEqual(env(after.containerId ?? "")[0], id)
        })
      ),
    180_000
  )
})

import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { containersOf, healthzTag, inspectContainer, openSettled, rowOf, withEngine } from "./harness.ts"
import { login, passwordOf } from "./probe.ts"

/**
 * A PR's devcontainer.json decides its sandbox: real builds (FROM prbox's
 * default image, built locally), real code-server from the host's
 * distribution mounted into an image that has none, and every expectation
 * checked inside the running container.
 */
const base = DefaultImage.DEFAULT_IMAGE

/** Reads a file inside the sandbox's container (as root: it checks, it does not act). */
const inContainer = (containerId: string, script: string): string =>
  execFileSync("docker", ["exec", containerId, "sh", "-c", script], { encoding: "utf8" }).trim()

const nodeLike = `// a web app's devcontainer, comments and trailing commas included
{
  "name": "web",
  "image": "${base}",
  "containerEnv": { "APP_ENV": "review", },
  "remoteEnv": { "GREETING": "hi \${containerEnv:APP_ENV}" },
  "workspaceFolder": "/workspaces/app",
  "onCreateCommand": ["sh", "-c", "echo onCreate >> /tmp/order"],
  "updateContentCommand": "echo updateContent >> /tmp/order",
  "postCreateCommand": { "a": "echo a > /tmp/post-a", "b": ["sh", "-c", "echo b > /tmp/post-b"] },
  "postStartCommand": "echo postStart >> /tmp/order; echo \\"$GREETING\\" > /tmp/greeting; pwd > /tmp/pwd; id -u > /tmp/uid",
}
`

const buildDockerfile = `FROM ${base} AS base
ARG FLAVOR=plain
RUN echo "$FLAVOR" > /etc/flavor
LABEL devcontainer.metadata="[{\\"remoteEnv\\":{\\"FROM_LABEL\\":\\"yes\\"},\\"postCreateCommand\\":\\"echo label >> /tmp/order\\"}]"
FROM base AS dev
RUN echo dev > /etc/stage
FROM base AS prod
RUN echo prod > /etc/stage
`

const buildJson = JSON.stringify({
  build: { dockerfile: "Dockerfile", context: "..", args: { FLAVOR: "spicy" }, target: "dev" },
  remoteUser: "root",
  postCreateCommand: 'echo json >> /tmp/order; echo "$FROM_LABEL" > /tmp/from-label; id -u > /tmp/uid'
})

describe("a PR's devcontainer.json", () => {
  it.live(
    "image, env, remoteEnv, workspace folder and the lifecycle commands in all three forms, in order, inside the container",
    () =>
      withEngine({ config: { image: healthzTag } }, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 11, { ".devcontainer/devcontainer.json": nodeLike })
          const row = yield* openSettled(remote.path, 11)
          assert.strictEqual(row.status, "running", row.error ?? "")
          assert.isNull(row.setupError)
          assert.deepInclude(row.environment ?? {}, {
            kind: "devcontainer",
            path: ".devcontainer/devcontainer.json",
            image: base
          })
          assert.match(row.environment?.imageDigest ?? "", /^sha256:/)
          const id = row.containerId ?? assert.fail("no container")
          assert.strictEqual(inContainer(id, "cat /tmp/order"), "onCreate\nupdateContent\npostStart")
          assert.strictEqual(inContainer(id, "cat /tmp/post-a /tmp/post-b"), "a\nb")
          assert.strictEqual(inContainer(id, "cat /tmp/greeting"), "hi review")
          assert.strictEqual(inContainer(id, "cat /tmp/pwd"), "/workspaces/app")
          assert.notStrictEqual(inContainer(id, "cat /tmp/uid"), "0", "the sandbox ran as root")
          assert.strictEqual(inContainer(id, "printenv APP_ENV"), "review")
          assert.isTrue(inContainer(id, "ls -a /workspaces/app").includes(".devcontainer"))
          // The image has no code-server: prbox's own answers its real login.
          const answer = yield* login(row.hostPort ?? 0, passwordOf(row))
          assert.strictEqual(answer.status, 302)
          assert.match(answer.headers.get("set-cookie") ?? "", /code-server-session=/)
        })
      ),
    180_000
  )

  it.live(
    "a multi-stage build with args and target, merged with its image's metadata label; root is not honoured",
    () =>
      withEngine({ config: { image: healthzTag } }, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 12, {
            ".devcontainer/devcontainer.json": buildJson,
            ".devcontainer/Dockerfile": buildDockerfile
          })
          const row = yield* openSettled(remote.path, 12)
          assert.strictEqual(row.status, "running", row.error ?? "")
          assert.strictEqual(row.environment?.kind, "devcontainer")
          assert.match(row.environment?.image ?? "", /^prbox-build\//)
          const id = row.containerId ?? assert.fail("no container")
          assert.strictEqual(inContainer(id, "cat /etc/flavor /etc/stage"), "spicy\ndev")
          assert.strictEqual(inContainer(id, "cat /tmp/order"), "label\njson")
          assert.strictEqual(inContainer(id, "cat /tmp/from-label"), "yes")
          assert.notStrictEqual(inContainer(id, "cat /tmp/uid"), "0")
          const lines = (yield* SandboxService.use((s) => s.logs(row.id, { limit: 1000 }))).flatMap((event) =>
            event._tag === "Progress" ? [event.line] : []
          )
          assert.isTrue(
            lines.some((line) => /warning: .*root/.test(line)),
            "no warning said root is not honoured"
          )
          // A second sandbox of the same inputs reuses the built image.
          pushPullRequest(remote.path, 13, {
            ".devcontainer/devcontainer.json": buildJson,
            ".devcontainer/Dockerfile": buildDockerfile
          })
          const again = yield* openSettled(remote.path, 13)
          assert.strictEqual(again.environment?.image, row.environment?.image)
          const againLines = (yield* SandboxService.use((s) => s.logs(again.id, { limit: 1000 }))).flatMap((event) =>
            event._tag === "Progress" ? [event.line] : []
          )
          assert.isTrue(againLines.some((line) => line.startsWith("reusing prbox-build/")))
        })
      ),
    240_000
  )

  const refused: ReadonlyArray<readonly [string, Record<string, string>, RegExp]> = [
    [
      "JSONC that VS Code recovers no object from",
      { ".devcontainer/devcontainer.json": '"image": "x"' },
      /devcontainer\.json: expected a JSON object; invalid JSON at 1:8: EndOfFileExpected/
    ],
    [
      "a property of the wrong type",
      { ".devcontainer/devcontainer.json": JSON.stringify({ image: base, forwardPorts: [true] }) },
      /forwardPorts\[0\]/
    ],
    [
      "a missing Dockerfile",
      { ".devcontainer/devcontainer.json": JSON.stringify({ build: { dockerfile: "Nope" } }) },
      /build\.dockerfile/
    ],
    [
      "several named configurations and no choice",
      {
        ".devcontainer/python/devcontainer.json": JSON.stringify({ image: base }),
        ".devcontainer/node/devcontainer.json": JSON.stringify({ image: base })
      },
      /node.*python|python.*node/
    ]
  ]

  it.live.each(refused)("%s is refused at open: exit-2 error, no row, no container", ([, files, reason]) =>
    withEngine({}, ({ remote, home }) =>
      Effect.gen(function* () {
        pushPullRequest(remote.path, 21, files)
        const sandboxes = yield* SandboxService
        const error = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 21 }))
        assert.strictEqual(error._tag, "InvalidDevcontainer", error.message)
        assert.match(error.message, reason)
        assert.deepStrictEqual(yield* sandboxes.listAll, [])
        assert.deepStrictEqual(
          execFileSync("docker", ["ps", "-aq", "--filter", `label=dev.prbox.home=${home}`], { encoding: "utf8" }),
          ""
        )
      })
    )
  )

  it.live("--devcontainer picks one of several named configurations", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        pushPullRequest(remote.path, 22, {
          ".devcontainer/python/devcontainer.json": JSON.stringify({ image: "prbox-test/none:missing" }),
          ".devcontainer/stub/devcontainer.json": JSON.stringify({ image: healthzTag, containerEnv: { PICK: "stub" } })
        })
        const sandboxes = yield* SandboxService
        const opened = yield* sandboxes.open({ input: remote.path, pr: 22, devcontainer: "stub" })
        yield* sandboxes.awaitIdle(opened.id)
        const row = yield* rowOf(opened.id)
        assert.strictEqual(row.status, "running", row.error ?? "")
        assert.strictEqual(row.environment?.path, ".devcontainer/stub/devcontainer.json")
        assert.strictEqual(inContainer(row.containerId ?? "", 'echo "$PICK"'), "stub")
      })
    )
  )

  it.live("a failing build step and an image without glibc end the row in error, naming why; nothing runs", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        pushPullRequest(remote.path, 31, {
          ".devcontainer/devcontainer.json": JSON.stringify({ build: { dockerfile: "Dockerfile" } }),
          ".devcontainer/Dockerfile": `FROM ${base}\nRUN echo about to fail && exit 7\n`
        })
        const broken = yield* openSettled(remote.path, 31)
        assert.strictEqual(broken.status, "error")
        assert.match(broken.error ?? "", /RUN echo about to fail && exit 7/)
        assert.deepStrictEqual(containersOf(broken.id, { all: true }), [])

        pushPullRequest(remote.path, 32, {
          ".devcontainer/devcontainer.json": JSON.stringify({ build: { dockerfile: "Dockerfile" } }),
          // busybox, and no label saying it brings its own code-server.
          ".devcontainer/Dockerfile": `FROM ${healthzTag}\nLABEL dev.prbox.code-server=""\n`
        })
        const noGlibc = yield* openSettled(remote.path, 32)
        assert.strictEqual(noGlibc.status, "error")
        assert.match(noGlibc.error ?? "", /has no glibc/)
        assert.deepStrictEqual(containersOf(noGlibc.id, { all: false }), [])
      })
    )
  )

  it.live(
    "a repository the user trusts (config.json, never the PR) may widen its container as its base branch configures it",
    () =>
      withEngine({ configFile: true }, ({ remote, home }) =>
        Effect.gen(function* () {
          const widened = {
            image: base,
            remoteUser: "root",
            runArgs: ["--cap-add", "SYS_PTRACE", "--network=host"],
            postCreateCommand: "id -u > /tmp/uid"
          }
          // The base branch has the widening configuration; PR 41 leaves it as it is.
          const onBase = pushPullRequest(remote.path, 40, {
            ".devcontainer/devcontainer.json": JSON.stringify(widened)
          })
          execFileSync("git", [`--git-dir=${remote.path}`, "update-ref", "refs/heads/main", onBase])
          pushPullRequest(remote.path, 41, { "feature.txt": "a change of code only\n" })
          const config = (trusted: ReadonlyArray<string>, untrustedWidening: "omit" | "refuse" = "omit") =>
            writeFileSync(
              join(home, "config.json"),
              JSON.stringify({ healthTimeoutSeconds: 30, trustedRepositories: trusted, untrustedWidening })
            )
          // Untrusted, with the widening refused rather than left out (UntrustedWidening.test.ts: left out).
          config([], "refuse")
          const untrusted = yield* Effect.flip(SandboxService.use((s) => s.open({ input: remote.path, pr: 41 })))
          assert.match(untrusted.message, /runArgs/)
          config([`local${remote.path}`])
          const row = yield* openSettled(remote.path, 41)
          assert.strictEqual(row.status, "running", row.error ?? "")
          const id = row.containerId ?? assert.fail("no container")
          assert.strictEqual(inContainer(id, "cat /tmp/uid"), "0")
          assert.include(inspectContainer(id).HostConfig.CapAdd ?? [], "SYS_PTRACE")
          const lines = (yield* SandboxService.use((s) => s.logs(row.id, { limit: 1000 }))).flatMap((event) =>
            event._tag === "Progress" ? [event.line] : []
          )
          assert.isTrue(lines.some((line) => line.includes("runArgs --network=host is not supported")))

          // A PR of the same trusted repository that changes the configuration gets none of its widening:
          // it opens without it, and says it is new in this PR.
          pushPullRequest(remote.path, 42, {
            ".devcontainer/devcontainer.json": JSON.stringify({ ...widened, runArgs: ["--privileged"] })
          })
          const changed = yield* openSettled(remote.path, 42)
          assert.strictEqual(changed.status, "running", changed.error ?? "")
          const changedId = changed.containerId ?? assert.fail("no container")
          assert.notStrictEqual(inContainer(changedId, "cat /tmp/uid"), "0")
          assert.isFalse(inspectContainer(changedId).HostConfig.Privileged)
          assert.deepStrictEqual(
            changed.environment?.ignored?.map((left) => left.property),
            ["runArgs[0]"]
          )
          assert.include(
            changed.environment?.ignored?.[0]?.detail ?? "",
            "this PR changes .devcontainer/devcontainer.json from its base branch: new in this PR, it is honoured once it is on the base branch"
          )
          // One that changes it without asking for widening opens, as an untrusted PR would, and says why.
          pushPullRequest(remote.path, 43, {
            ".devcontainer/devcontainer.json": JSON.stringify({ image: base, postCreateCommand: "id -u > /tmp/uid" })
          })
          const plain = yield* openSettled(remote.path, 43)
          assert.strictEqual(plain.status, "running", plain.error ?? "")
          assert.notStrictEqual(inContainer(plain.containerId ?? "", "cat /tmp/uid"), "0")
          const said = (yield* SandboxService.use((s) => s.logs(plain.id, { limit: 1000 }))).flatMap((event) =>
            event._tag === "Progress" ? [event.line] : []
          )
          assert.isTrue(said.some((line) => line.includes("this PR changes .devcontainer/devcontainer.json")))

          // The base branch drops the widening after the mirror was made: a PR still on the old base, carrying
          // the old configuration, is judged against the branch as it is now, not the mirror's stale copy.
          const plainBase = pushPullRequest(remote.path, 45, {
            ".devcontainer/devcontainer.json": JSON.stringify({ image: base })
          })
          execFileSync("git", [`--git-dir=${remote.path}`, "update-ref", "refs/heads/main", plainBase])
          pushPullRequest(remote.path, 44, { "late.txt": "on the old base\n" }, "refs/pull/40/head")
          const stale = yield* openSettled(remote.path, 44)
          assert.strictEqual(stale.status, "running", stale.error ?? "")
          assert.notInclude(inspectContainer(stale.containerId ?? "").HostConfig.CapAdd ?? [], "SYS_PTRACE")
          assert.deepStrictEqual(
            stale.environment?.ignored?.map((left) => left.property),
            ["runArgs[0]", "runArgs[2]"]
          )
          assert.include(
            stale.environment?.ignored?.[0]?.detail ?? "",
            "this PR changes .devcontainer/devcontainer.json from its base branch"
          )
        })
      )
  )

  it.live("update runs updateContentCommand; rebuild reads devcontainer.json again from the workspace", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const json = (env: Record<string, string>) =>
          JSON.stringify({
            image: base,
            containerEnv: env,
            updateContentCommand: "echo content >> /tmp/content",
            postStartCommand: "echo start >> /tmp/started"
          })
        const first = pushPullRequest(remote.path, 51, { ".devcontainer/devcontainer.json": json({ STAGE: "one" }) })
        const row = yield* openSettled(remote.path, 51)
        assert.strictEqual(row.status, "running", row.error ?? "")
        const before = row.containerId ?? assert.fail("no container")
        pushPullRequest(remote.path, 51, { "next.txt": "next\n" }, first)
        const sandboxes = yield* SandboxService
        const report = yield* sandboxes.update(row.id, { force: false })
        assert.strictEqual(report.outcome, "fast-forwarded")
        assert.deepStrictEqual(report.updateContent, { ran: true, error: null })
        assert.strictEqual(inContainer(before, "cat /tmp/content"), "content\ncontent")

        writeFileSync(join(row.workspacePath ?? "", ".devcontainer", "devcontainer.json"), json({ STAGE: "two" }))
        yield* sandboxes.rebuild(row.id)
        yield* sandboxes.awaitIdle(row.id)
        const rebuilt = yield* rowOf(row.id)
        assert.strictEqual(rebuilt.status, "running", rebuilt.error ?? "")
        assert.strictEqual(rebuilt.hostPort, row.hostPort)
        const after = rebuilt.containerId ?? assert.fail("no container")
        assert.notStrictEqual(after, before)
        assert.strictEqual(inContainer(after, 'echo "$STAGE"'), "two")
        assert.strictEqual(inContainer(after, "cat /tmp/started"), "start")
        assert.isTrue(inContainer(after, "ls -a .").includes("next.txt"), "the workspace was not kept")

        // A broken devcontainer.json refuses the rebuild and leaves the running container alone.
        writeFileSync(join(row.workspacePath ?? "", ".devcontainer", "devcontainer.json"), "{ nope")
        const refused = yield* Effect.flip(sandboxes.rebuild(row.id))
        assert.strictEqual(refused._tag, "InvalidDevcontainer")
        assert.strictEqual((yield* rowOf(row.id)).containerId, after)
      })
    )
  )

  it.live("an extension that cannot be installed is reported in the log; the sandbox still runs", () =>
    withEngine(
      {
        config: {
          // A gallery that refuses every connection: no marketplace is reachable here (the success path is Extensions.test.ts).
          env: {
            EXTENSIONS_GALLERY: JSON.stringify({
              serviceUrl: "http://127.0.0.1:9/gallery",
              itemUrl: "http://127.0.0.1:9/item",
              resourceUrlTemplate: "http://127.0.0.1:9/{publisher}/{name}/{version}/{path}"
            })
          }
        }
      },
      ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 61, {
            ".devcontainer/devcontainer.json": JSON.stringify({
              image: base,
              customizations: { vscode: { extensions: ["prbox.not-there"] } },
              postCreateCommand: "echo after > /tmp/after"
            })
          })
          const row = yield* openSettled(remote.path, 61)
          assert.strictEqual(row.status, "running", row.error ?? "")
          assert.isNull(row.setupError)
          const lines = (yield* SandboxService.use((s) => s.logs(row.id, { limit: 1000 }))).flatMap((event) =>
            event._tag === "Progress" ? [event.line] : []
          )
          assert.isTrue(
            lines.some((line) => line.startsWith("extension prbox.not-there could not be installed")),
            lines.join("\n")
          )
          assert.strictEqual(inContainer(row.containerId ?? "", "cat /tmp/after"), "after")
        })
    )
  )
})

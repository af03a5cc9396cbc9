import { execFileSync, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type Sandbox, type SandboxId, statePaths } from "@prbox/domain"
import { Effect, Ref, Result } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { folderSnapshot } from "../../../scripts/testing/snapshot.ts"
import { movePullRequest, pushPullRequest } from "../../git/test/helpers.ts"
import { CONTAINER_HOME } from "../src/CodeServerSpec.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { containersOf, inspectContainer, openRunning, rowOf, withEngine } from "./harness.ts"

/**
 * A sandbox swaps folders (and files) of its workspace and home for
 * symbolic links to a folder of this machine outside it; the host then does
 * what a user asks next (update, restart, rebuild, stop, delete). The link
 * targets are absolute host paths: in the container they name nothing, on
 * the host a folder of root's. The host shows nothing happened: no owner,
 * mode or byte of that folder changed, none of its files removed, read into
 * an environment or packed into an image.
 */

/** A folder of this machine, outside every sandbox: root's, folders 0755 and files 0644. */
const hostFolder = (files: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = Fs.mkdtempSync(join(tmpdir(), "prbox-host-"))
      Fs.chmodSync(dir, 0o755)
      for (const [path, content] of Object.entries(files)) {
        const target = join(dir, path)
        Fs.mkdirSync(dirname(target), { recursive: true })
        Fs.writeFileSync(target, content)
        Fs.chmodSync(dirname(target), 0o755)
        Fs.chmodSync(target, 0o644)
      }
      return dir
    }),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

/** Runs `script` in the sandbox's container, in its workspace folder, as its user (or root: an image's sudo). */
const inSandbox = (row: Sandbox, script: string, asRoot = false) => {
  const containerId = row.containerId ?? ""
  const user = asRoot ? "0:0" : inspectContainer(containerId).Config.User
  const folder = row.environmentPlan?.workspaceFolder ?? "/workspace"
  const run = spawnSync("docker", ["exec", "-u", user, "-w", folder, containerId, "sh", "-c", script], {
    encoding: "utf8"
  })
  assert.strictEqual(run.status, 0, `in the sandbox: ${script}\n${run.stderr}`)
}

/** Once the sandbox's worker ended: its row, which must say running. */
const runningAfter = (id: SandboxId) =>
  Effect.gen(function* () {
    yield* Effect.flatMap(SandboxService, (sandboxes) => sandboxes.awaitIdle(id))
    const row = yield* rowOf(id)
    assert.strictEqual(row.status, "running", row.error ?? "")
    return row
  })

const stopAndRebuild = (id: SandboxId) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    yield* sandboxes.stop(id)
    const rebuilt = yield* Effect.result(sandboxes.rebuild(id))
    yield* sandboxes.awaitIdle(id)
    return rebuilt
  })

const rootFiles = { "canary.txt": "canary\n", "sub/inner.txt": "inner\n" }

describe("a sandbox that links its folders to a host folder", () => {
  it.live("update, restart, rebuild and stop change no owner, mode or byte of what the links point at", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const host = yield* hostFolder(rootFiles)
        const before = folderSnapshot(host)
        assert.strictEqual(before["."], "755 0:0 dir", "the host folder is not root's as the test expects")
        return yield* withEngine({ config: { image: healthzGitImage() } }, (fixture) =>
          Effect.gen(function* () {
            const sandboxes = yield* SandboxService
            const row = yield* openRunning(fixture.remote.path, 1)
            // Folders of the workspace, of its .git and of its home become links into the host folder
            // (.git/info/exclude keeps them out of the update's check for uncommitted changes).
            const plant = [
              `ln -s ${host} src && mkdir -p a/b && ln -s ${host}/sub a/b/c && ln -s ${host}/canary.txt notes.txt`,
              `rm -rf .git/hooks && ln -s ${host} .git/hooks`,
              `mkdir -p .git/info && printf '/src\\n/a/\\n/notes.txt\\n' >> .git/info/exclude`,
              `mkdir -p ${CONTAINER_HOME}/.cache && ln -s ${host} ${CONTAINER_HOME}/mine`,
              `rm -rf ${CONTAINER_HOME}/.cache && ln -s ${host}/sub ${CONTAINER_HOME}/.cache`
            ]
            inSandbox(row, plant.join(" && "))
            // Root's files in the workspace and the home (an image's sudo): any host walk would hand them over.
            inSandbox(row, `touch a/witness ${CONTAINER_HOME}/witness && ln -s ${host} a/rootlink`, true)
            const workspace = row.workspacePath ?? ""
            const witnesses = [join(workspace, "a/witness"), join(workspace, "a/rootlink")]
            witnesses.push(join(statePaths(fixture.home).sandbox(row.id).home, "witness"))
            const next = movePullRequest(fixture.home, fixture.remote.pr1, `next-${Date.now()}.txt`)
            const report = yield* sandboxes.update(row.id, { force: true })
            assert.strictEqual(report.to, next, "the update did not move the workspace over the links")
            // Then the whole .git.
            inSandbox(row, `mv .git /tmp/moved.git && ln -s ${host} .git`)
            yield* sandboxes.stop(row.id)
            yield* sandboxes.restart(row.id)
            yield* runningAfter(row.id)
            yield* sandboxes.rebuild(row.id)
            yield* runningAfter(row.id)
            yield* sandboxes.stop(row.id)
            assert.deepStrictEqual(folderSnapshot(host), before)
            const owners = witnesses.map((path) => Fs.lstatSync(path).uid)
            assert.deepStrictEqual(owners, [0, 0, 0], `a host walk went over the workspace: ${witnesses.join(" ")}`)
          })
        )
      })
    )
  )

  it.live("delete removes the workspace and the home, nothing their links lead to, once the container is gone", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const host = yield* hostFolder(rootFiles)
        const before = folderSnapshot(host)
        // The latch is the container's removal: the delete waits in it while the host's view of the workspace
        // and home is taken as it begins and once Docker no longer knows the container.
        const watched = yield* Ref.make<ReadonlyArray<string>>([])
        const seen = yield* Ref.make<ReadonlyArray<{ readonly gone: boolean; readonly whole: boolean }>>([])
        const trees = (paths: ReadonlyArray<string>) =>
          JSON.stringify(paths.map((path) => (Fs.existsSync(path) ? folderSnapshot(path) : null)))
        return yield* withEngine(
          {
            config: { image: healthzGitImage() },
            runtime: (real) => ({
              ...real,
              destroy: (containerId, options) =>
                Effect.gen(function* () {
                  const paths = yield* Ref.get(watched)
                  const atStart = trees(paths)
                  const done = yield* real.destroy(containerId, options)
                  const gone = spawnSync("docker", ["inspect", containerId], { stdio: "ignore" }).status !== 0
                  const whole = paths.every((path) => Fs.existsSync(path)) && trees(paths) === atStart
                  yield* Ref.update(seen, (all) => [...all, { gone, whole }])
                  return done
                })
            })
          },
          ({ home, remote }) =>
            Effect.gen(function* () {
              const paths = statePaths(home)
              const row = yield* openRunning(remote.path, 1)
              const folders = [row.workspacePath ?? "", paths.sandbox(row.id).home]
              // Next to the sandbox's folder, and to the one before it on the way: what links to `..` lead to.
              const neighbours = [join(paths.sandboxes, "neighbour.txt"), join(home, "neighbour.txt")]
              for (const path of neighbours) Fs.writeFileSync(path, "neighbour\n")
              const links = (root: string) => [
                `ln -s ${host} ${root}/out && ln -s ${host}/canary.txt ${root}/canary`,
                `mkdir -p ${root}/a/b ${root}/x && ln -s ${host} ${root}/a/b/c && ln -s ../a/b/c/sub ${root}/x/y`,
                `ln -s .. ${root}/up && ln -s . ${root}/loop`
              ]
              inSandbox(row, [...links("."), ...links(CONTAINER_HOME)].join(" && "))
              const planted = folders.map((folder) => Fs.readlinkSync(join(folder, "a/b/c")))
              assert.deepStrictEqual(planted, [host, host])
              yield* Ref.set(watched, folders)
              yield* Effect.flatMap(SandboxService, (sandboxes) => sandboxes.delete(row.id))
              assert.deepStrictEqual(yield* Ref.get(seen), [{ gone: true, whole: true }])
              assert.deepStrictEqual(
                folders.filter((path) => Fs.existsSync(path)),
                [],
                "left after delete"
              )
              assert.deepStrictEqual(folderSnapshot(host), before)
              for (const path of neighbours) assert.strictEqual(Fs.readFileSync(path, "utf8"), "neighbour\n")
            })
        )
      })
    )
  )
})

/**
 * A devcontainer.json that, were it read, would widen the container (left
 * out for a repository nobody trusts, naming what was read in the log and
 * the row) and name itself in the container's environment.
 */
const hostDevcontainer = (image: string) =>
  JSON.stringify({
    image,
    containerEnv: { PRBOX_READ_FROM: "host" },
    runArgs: ["--privileged"],
    mounts: ["source=/,target=/host,type=bind"]
  })

/** The sandbox's containers (any state) that show the host's devcontainer.json was read. */
const widenedContainers = (id: SandboxId) =>
  containersOf(id, { all: true }).filter((containerId) => {
    const format = "{{json .Config.Env}} {{.HostConfig.Privileged}} {{json .Mounts}}"
    const info = execFileSync("docker", ["inspect", "-f", format, containerId], { encoding: "utf8" })
    return info.includes("PRBOX_READ_FROM") || info.includes(" true ") || info.includes('"/host"')
  })

/** Nothing only the host's files say in a rebuild's answer. */
const learntNothing = (result: Result.Result<unknown, { readonly message: string }>) => {
  const message = Result.isFailure(result) ? result.failure.message : ""
  for (const learnt of ["runArgs", "mounts", "PRBOX_READ_FROM", "LABEL"]) assert.notInclude(message, learnt)
}

/** A rebuild refused at the link (the engine sent the link, never what it names), in a reason naming nothing of the host's. */
const refusedForTheLink = (result: Result.Result<unknown, { readonly message: string }>, what: string) => {
  assert.isTrue(Result.isFailure(result), `the rebuild went through the ${what}'s link`)
  learntNothing(result)
}

const base = DefaultImage.DEFAULT_IMAGE

/** The tags of a repository's images (prbox-build/<the fixture's remote>: this test's alone). */
const imageTags = (repository: string): Array<string> =>
  execFileSync("docker", ["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", `reference=${repository}`], {
    encoding: "utf8"
  })
    .split("\n")
    .filter((tag) => tag !== "")

/** No image holds `secret` in its copy of the context (read by a labelled container), nor the host Dockerfile's label. */
const noImageHolds = (images: ReadonlyArray<string>, secret: string) => {
  for (const image of images) {
    const label = `${TEST_RUN_LABEL}=${inject("testRunId")}`
    const cat = "cat /ctx-copy/* 2>/dev/null; true"
    const run = ["run", "--rm", "--label", label, "--entrypoint", "sh", image, "-c", cat]
    assert.notInclude(execFileSync("docker", run, { encoding: "utf8" }), secret, `${image} holds the host's secret`)
    const labels = execFileSync("docker", ["image", "inspect", "-f", "{{json .Config.Labels}}", image], {
      encoding: "utf8"
    })
    assert.notInclude(labels, "test-read-from", `${image} was built from the host's Dockerfile`)
  }
}

describe("a rebuild whose paths the sandbox swapped for links to a host folder", () => {
  it.live("a linked .devcontainer, running or stopped: an error or the sandbox's own view, never the host's file", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const image = healthzGitImage()
        const host = yield* hostFolder({ "devcontainer.json": hostDevcontainer(image) })
        return yield* withEngine({ config: { image } }, ({ remote }) =>
          Effect.gen(function* () {
            const sandboxes = yield* SandboxService
            const row = yield* openRunning(remote.path, 1)
            inSandbox(row, `ln -s ${host} .devcontainer`)
            // Running: read in the container, where the link leads out of the workspace, to nothing.
            const running = yield* Effect.result(sandboxes.rebuild(row.id))
            const afterRunning = yield* runningAfter(row.id)
            if (Result.isFailure(running)) assert.notInclude(running.failure.message, "runArgs")
            assert.notStrictEqual(afterRunning.environment?.kind, "devcontainer")
            assert.deepStrictEqual(widenedContainers(row.id), [])
            // Stopped (HostileRebuild swaps only while the rebuild stops it): read through the engine, where the
            // link is sent as a link and leads to nothing; an error, or no devcontainer at all.
            learntNothing(yield* stopAndRebuild(row.id))
            assert.notStrictEqual((yield* rowOf(row.id)).environment?.kind, "devcontainer")
            assert.deepStrictEqual(widenedContainers(row.id), [])
          })
        )
      })
    )
  )

  it.live("stopped, a file of the build context, the context, the Dockerfile: no image holds the host's secret", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const secret = `host secret ${randomUUID()}`
        const Dockerfile = `FROM ${base}\nLABEL dev.prbox.test-read-from=host\nCOPY . /ctx-copy/\n`
        const host = yield* hostFolder({ "secret.txt": `${secret}\n`, Dockerfile })
        // The images built here go at the end (after the fixture's containers), by tag: never another test's.
        const repository = yield* Effect.acquireRelease(Ref.make(""), (built) =>
          Effect.map(Ref.get(built), (name) => {
            const tags = name === "" ? [] : imageTags(name)
            if (tags.length > 0) spawnSync("docker", ["rmi", ...tags], { stdio: "ignore" })
          })
        )
        return yield* withEngine({}, ({ remote }) =>
          Effect.gen(function* () {
            const sandboxes = yield* SandboxService
            pushPullRequest(remote.path, 62, {
              ".devcontainer/devcontainer.json": JSON.stringify({
                build: { dockerfile: "ctx/Dockerfile", context: "ctx" }
              }),
              ".devcontainer/ctx/Dockerfile": `FROM ${base}\nCOPY . /ctx-copy/\n`,
              ".devcontainer/ctx/hello.txt": "hello\n"
            })
            const row = yield* openRunning(remote.path, 62)
            const built = (row.environment?.image ?? "").split(":")[0] ?? ""
            yield* Ref.set(repository, built)
            // A file of the context: packed as the link it is, which names nothing in the image.
            inSandbox(row, `ln -sf ${host}/secret.txt .devcontainer/ctx/hello.txt`)
            assert.isTrue(Result.isSuccess(yield* stopAndRebuild(row.id)))
            const rebuilt = yield* runningAfter(row.id)
            assert.lengthOf(imageTags(built), 2, "the rebuild made no image of its own: it proves nothing")
            noImageHolds(imageTags(built), secret)
            // The context folder.
            inSandbox(rebuilt, `rm -rf .devcontainer/ctx && ln -s ${host} .devcontainer/ctx`)
            const linkedContext = yield* stopAndRebuild(row.id)
            noImageHolds(imageTags(built), secret)
            refusedForTheLink(linkedContext, "context")
            // The Dockerfile (the refused rebuild kept the old container).
            yield* sandboxes.restart(row.id)
            const relink = `mkdir .devcontainer/ctx && ln -s ${host}/Dockerfile .devcontainer/ctx/Dockerfile`
            inSandbox(yield* runningAfter(row.id), `rm .devcontainer/ctx && ${relink}`)
            const linkedDockerfile = yield* stopAndRebuild(row.id)
            noImageHolds(imageTags(built), secret)
            refusedForTheLink(linkedDockerfile, "Dockerfile")
          })
        )
      })
    )
  )
})

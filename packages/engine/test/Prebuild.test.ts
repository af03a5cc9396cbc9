import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { type EnvironmentPlan, type LifecycleStep, PREBUILD_LABELS } from "@prbox/domain"
import { Effect } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { CONTAINER_WORKSPACE } from "../src/CodeServerSpec.ts"
import {
  daemonSandboxUser,
  Installation,
  MakePrebuild,
  PREBUILD_HOME_LABEL,
  PREBUILD_IMAGE_LABELS,
  userSpec
} from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { withEngine } from "./harness.ts"
import { removePrebuildsOf } from "./prebuild-support.ts"

const shell = (hook: LifecycleStep["hook"], command: string): LifecycleStep => ({
  hook,
  command: { _tag: "Shell", command },
  origin: "devcontainer.json"
})

const planOf = (image: string, steps: ReadonlyArray<LifecycleStep>): EnvironmentPlan => ({
  image,
  containerEnv: {},
  remoteEnv: {},
  remoteUser: null,
  workspaceFolder: CONTAINER_WORKSPACE,
  forwardPorts: [],
  portsAttributes: {},
  cpus: null,
  memoryMb: null,
  extensions: [],
  steps
})

const lines = (args: ReadonlyArray<string>) =>
  execFileSync("docker", args, { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

/** Reads a volume by a throwaway container of the test image, as the sandbox user (a test's look, never prbox's). */
const inVolume = (image: string, volume: string, script: string) =>
  execFileSync(
    "docker",
    [
      "run",
      "--rm",
      "--label",
      `${TEST_RUN_LABEL}=${inject("testRunId")}`,
      "--user",
      userSpec(daemonSandboxUser()),
      "--entrypoint",
      "/bin/sh",
      "-v",
      `${volume}:/w:ro`,
      image,
      "-c",
      script
    ],
    { encoding: "utf8" }
  ).trim()

/** An image's config as `docker image inspect` says it. */
const imageConfig = (ref: string) =>
  JSON.parse(lines(["image", "inspect", "--format", "{{json .Config}}", ref])[0] ?? "{}") as {
    readonly Entrypoint: ReadonlyArray<string> | null
    readonly Cmd: ReadonlyArray<string> | null
    readonly User: string
    readonly Env: ReadonlyArray<string> | null
    readonly WorkingDir: string
    readonly Labels: Readonly<Record<string, string>> | null
  }

describe("making a prebuild", () => {
  it.live(
    "the base is checked out in its volume by the container's git, onCreate and updateContent ran there (postCreate did not); what they changed elsewhere is an image that runs as the environment's; the container is gone, the row ready",
    () =>
      withEngine({ config: { image: healthzGitImage() } }, ({ home, remote }) =>
        Effect.gen(function* () {
          const image = healthzGitImage()
          const prebuilds = yield* MakePrebuild
          const install = (yield* Installation).id
          const progress: Array<string> = []
          const row = yield* prebuilds.make(
            {
              key: "k1",
              host: "localhost",
              repository: "acme/widgets",
              baseBranch: "main",
              baseCommit: remote.main,
              mirrorPath: remote.path,
              plan: planOf(image, [
                shell(
                  "onCreateCommand",
                  'mkdir -p node_modules && echo made > node_modules/.made && echo "$HOME" > home.txt'
                ),
                shell("updateContentCommand", "echo updated >> node_modules/.made"),
                // Its CPU weight as its own cgroup says: v2's cpu.weight, else v1's cpu.shares.
                shell(
                  "updateContentCommand",
                  "cat /sys/fs/cgroup/cpu.weight 2>/dev/null > cpu.txt || cat /sys/fs/cgroup/cpu/cpu.shares > cpu.txt"
                ),
                shell("postCreateCommand", "echo never > post.txt")
              ])
            },
            (line) => Effect.sync(() => void progress.push(line))
          )
          assert.strictEqual(row?.state, "ready", row?.error ?? "")
          const volume = row?.volume ?? ""
          yield* Effect.sync(() => {
            assert.isAbove(row?.sizeBytes ?? 0, 0)
            assert.strictEqual(inVolume(image, volume, "git -C /w rev-parse HEAD"), remote.main)
            assert.strictEqual(inVolume(image, volume, "git -C /w symbolic-ref --short HEAD"), "main")
            assert.strictEqual(inVolume(image, volume, "cat /w/node_modules/.made"), "made\nupdated")
            assert.strictEqual(inVolume(image, volume, "cat /w/README.md"), "README.md")
            assert.strictEqual(inVolume(image, volume, "cat /w/home.txt"), "/home/prbox")
            // CpuShares 128, an eighth of Docker's default 1024: cgroup v2 maps it to weight 5 (1024 to 39).
            assert.oneOf(inVolume(image, volume, "cat /w/cpu.txt"), ["5", "128"], "it runs at low priority")
            assert.strictEqual(inVolume(image, volume, "test -e /w/post.txt && echo yes || echo no"), "no")
            const labels = JSON.parse(
              lines(["volume", "inspect", "--format", "{{json .Labels}}", volume])[0] ?? "{}"
            ) as Record<string, string>
            assert.strictEqual(labels[PREBUILD_LABELS.prebuild], row?.id)
            assert.strictEqual(labels[PREBUILD_LABELS.key], "k1")
            assert.strictEqual(labels[PREBUILD_HOME_LABEL], home)
            assert.strictEqual(labels["dev.prbox.install"], install)
            assert.isUndefined(labels["dev.prbox.sandbox"], "a prebuild is never a sandbox")
            assert.deepStrictEqual(
              lines(["ps", "-aq", "--filter", `label=${PREBUILD_LABELS.prebuild}=${row?.id}`]),
              [],
              "its container is removed once it is made"
            )
            assert.isTrue(progress.some((line) => line.includes("onCreateCommand")))

            assert.strictEqual(row?.image, `prbox-prebuild:${row?.id}`)
            const made = imageConfig(row?.image ?? "")
            const base = imageConfig(image)
            assert.deepStrictEqual(made.Entrypoint, base.Entrypoint, "its entrypoint is the environment's")
            assert.deepStrictEqual(made.Cmd, base.Cmd)
            assert.strictEqual(made.User, base.User)
            assert.deepStrictEqual(made.Env, base.Env, "no variable of prbox's is baked in")
            assert.strictEqual(made.WorkingDir, base.WorkingDir)
            assert.strictEqual(made.Labels?.[PREBUILD_IMAGE_LABELS.prebuild], row?.id)
            assert.strictEqual(made.Labels?.[PREBUILD_IMAGE_LABELS.home], home)
            for (const key of [PREBUILD_LABELS.prebuild, PREBUILD_LABELS.key, PREBUILD_HOME_LABEL]) {
              assert.strictEqual(made.Labels?.[key], "", `${key}: nothing made from it is found as its container`)
            }
          })
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    180_000
  )

  it.live(
    "a step that fails: the row failed naming the hook and exit code, no volume and no container kept",
    () =>
      withEngine({ config: { image: healthzGitImage() } }, ({ remote }) =>
        Effect.gen(function* () {
          const prebuilds = yield* MakePrebuild
          const row = yield* prebuilds.make({
            key: "k2",
            host: "localhost",
            repository: "acme/widgets",
            baseBranch: "main",
            baseCommit: remote.main,
            mirrorPath: remote.path,
            plan: planOf(healthzGitImage(), [shell("onCreateCommand", "echo secret-output; exit 7")])
          })
          assert.strictEqual(row?.state, "failed")
          assert.match(row?.error ?? "", /onCreateCommand: exited with 7/)
          assert.notInclude(row?.error ?? "", "secret-output", "the step's output is never the row's error")
          const id = row?.id ?? ""
          assert.deepStrictEqual(lines(["ps", "-aq", "--filter", `label=${PREBUILD_LABELS.prebuild}=${id}`]), [])
          assert.deepStrictEqual(
            lines(["volume", "ls", "-q", "--filter", `label=${PREBUILD_LABELS.prebuild}=${id}`]),
            []
          )
          assert.deepStrictEqual(lines(["images", "-q", `prbox-prebuild:${id}`]), [], "no image kept")
        })
      ),
    180_000
  )
})

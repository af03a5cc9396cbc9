import { execFileSync } from "node:child_process"
import type { Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { gitSync, pushPullRequest } from "../../git/test/helpers.ts"
import { daemonSandboxUser, MakePrebuild, userSpec } from "../src/index.ts"
import { builtImage, healthzGitImage } from "./git-image.ts"
import { openRunning } from "./harness.ts"

export { removePrebuildsOf } from "./prebuild-cleanup.ts"

/**
 * The healthz-git image with `/usr/local/bin` open to every user, as
 * devcontainer images open it to their user for global installs (npm -g):
 * a step run as the sandbox user installs a tool there.
 */
export const openUsrLocalImage = (): string =>
  builtImage("prbox-test/usr-local", [`FROM ${healthzGitImage()}`, "RUN chmod 1777 /usr/local/bin", ""].join("\n"))

/** git in the sandbox's container as its user (the test's look; prbox's host never runs git there). */
export const gitIn = (row: Sandbox, ...args: ReadonlyArray<string>) =>
  execFileSync(
    "docker",
    [
      "exec",
      "--user",
      userSpec(daemonSandboxUser()),
      row.containerId ?? "",
      "git",
      "-C",
      row.environmentPlan?.workspaceFolder ?? "/workspace",
      ...args
    ],
    { encoding: "utf8" }
  ).trim()

/** A shell command in the sandbox's container as its user (the test's look). */
export const shInContainer = (row: Sandbox, script: string) =>
  execFileSync("docker", ["exec", "--user", userSpec(daemonSandboxUser()), row.containerId ?? "", "sh", "-c", script], {
    encoding: "utf8"
  }).trim()

/**
 * A repository whose base branch (main) holds `devcontainer`, opened once
 * (PR 3, the full path) and its prebuild made meanwhile: the base's commit
 * and that first open's row.
 */
export const prebuiltBase = (remote: string, devcontainer: string) =>
  Effect.gen(function* () {
    const base = pushPullRequest(remote, 90, { ".devcontainer/devcontainer.json": devcontainer })
    gitSync(remote, "update-ref", "refs/heads/main", base)
    pushPullRequest(remote, 3, { "three.txt": "3" })
    const first = yield* openRunning(remote, 3)
    yield* (yield* MakePrebuild).settled
    return { base, first }
  })

import { execFileSync } from "node:child_process"
import type { Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { daemonSandboxUser, PREBUILD_HOME_LABEL, PREBUILD_IMAGE_LABELS, userSpec } from "../src/index.ts"
import { builtImage, healthzGitImage } from "./git-image.ts"

const lines = (args: ReadonlyArray<string>) =>
  execFileSync("docker", args, { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

/**
 * What this test's home made for prebuilds, removed with it (a test's
 * cleanup; gc's own is tested apart): the sandboxes' containers made from
 * a prebuild's image (they carry its labels), then the volumes and images.
 */
export const removePrebuildsOf = (home: string) =>
  Effect.sync(() => {
    const imageLabel = `label=${PREBUILD_IMAGE_LABELS.home}=${home}`
    const containers = lines(["ps", "-aq", "--filter", imageLabel])
    if (containers.length > 0) execFileSync("docker", ["rm", "-f", ...containers], { stdio: "ignore" })
    const volumes = lines(["volume", "ls", "-q", "--filter", `label=${PREBUILD_HOME_LABEL}=${home}`])
    if (volumes.length > 0) execFileSync("docker", ["volume", "rm", "-f", ...volumes], { stdio: "ignore" })
    const images = lines(["images", "-q", "--filter", imageLabel])
    if (images.length > 0) execFileSync("docker", ["rmi", "-f", ...new Set(images)], { stdio: "ignore" })
  })

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

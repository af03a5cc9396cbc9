import { execFileSync } from "node:child_process"
import { describeEvent, type Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { daemonSandboxUser, SandboxService, userSpec } from "../src/index.ts"

/** The sandbox's log, each entry described as `prbox logs` shows it. */
export const logLines = (row: Sandbox) =>
  Effect.flatMap(SandboxService, (sandboxes) => sandboxes.logs(row.id, { limit: 1000 })).pipe(
    Effect.map((events) => events.map(describeEvent))
  )

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

/** The prebuilds' volumes of this test's home, removed with it (a test's cleanup; gc's own is tested apart). */
export const removePrebuildVolumes = (home: string) =>
  Effect.sync(() => {
    const names = execFileSync("docker", ["volume", "ls", "-q", "--filter", `label=dev.prbox.prebuild.home=${home}`], {
      encoding: "utf8"
    })
      .split("\n")
      .filter((name) => name.length > 0)
    if (names.length > 0) execFileSync("docker", ["volume", "rm", "-f", ...names], { stdio: "ignore" })
  })

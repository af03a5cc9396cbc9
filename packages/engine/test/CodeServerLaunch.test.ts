import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import type { EnvironmentPlan } from "@prbox/domain"
import { besideImageCommand, codeServerArgv, LAUNCHER } from "../src/CodeServerLaunch.ts"
import { homeEnvFor, keptVariables } from "../src/CodeServerSpec.ts"
import { PROBE_SCRIPT } from "../src/UserEnvProbe.ts"

/** How code-server is started, decided from the plan; the `overrideCommand: false` script run by this machine's /bin/sh. */
const plan: EnvironmentPlan = {
  image: "x",
  containerEnv: { C: "1" },
  remoteEnv: { R: "2" },
  remoteUser: "dev",
  workspaceFolder: "/workspaces/app",
  forwardPorts: [],
  portsAttributes: {},
  cpus: null,
  memoryMb: null,
  extensions: [],
  steps: []
}

const dir = mkdtempSync(join(tmpdir(), "prbox-launch-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("how code-server starts", () => {
  it("without a probe, prbox's Node runs code-server's entry; with one, through the launcher, with its timeout", () => {
    assert.deepStrictEqual(codeServerArgv(["/n", "/e"], plan, ["A"], 10), ["/n", "/e"])
    assert.deepStrictEqual(codeServerArgv(["/n", "/e"], { ...plan, userEnvProbe: "loginShell" }, ["A", "B"], 7), [
      "/n",
      "-e",
      LAUNCHER,
      "--",
      "-lc",
      "7",
      "A,B",
      PROBE_SCRIPT,
      "/e"
    ])
  })

  it("the remote user's own HOME once its uid is mapped; prbox's variables and remoteEnv are kept from the probe", () => {
    assert.strictEqual(homeEnvFor(plan).HOME, "/home/prbox")
    assert.isUndefined(homeEnvFor({ ...plan, remoteUserMapped: true }).HOME)
    assert.strictEqual(homeEnvFor({ ...plan, remoteUserMapped: true }).XDG_DATA_HOME, "/home/prbox/.local/share")
    const kept = keptVariables(plan)
    for (const key of ["HOME", "XDG_CONFIG_HOME", "USER", "PASSWORD", "R"]) assert.include(kept, key)
    assert.notInclude(kept, "C")
    assert.notInclude(keptVariables({ ...plan, remoteUserMapped: true }), "HOME")
  })

  it("overrideCommand false: code-server in the background (its words kept whole), then the image's command replaces the shell", () => {
    const codeServer = ["sh", "-c", `printf '%s|' "$@" > ${dir}/code-server`, "cs", "it's", "a b", "$HOME"]
    // The image's command waits for code-server's mark (a latch), then says who it is and with what.
    const image = [
      "sh",
      "-c",
      `while [ ! -e ${dir}/code-server ]; do sleep 0.05; done; printf '%s|' "$$" "$@" > ${dir}/image`,
      "img",
      "x y"
    ]
    const run = spawnSync("/bin/sh", ["-c", besideImageCommand(codeServer), "prbox", ...image], {
      encoding: "utf8",
      timeout: 20_000
    })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.strictEqual(readFileSync(join(dir, "code-server"), "utf8"), "it's|a b|$HOME|")
    const [pid, ...args] = readFileSync(join(dir, "image"), "utf8").split("|")
    // `exec`: the image's command is the shell's own process (it would be PID 1).
    assert.strictEqual(Number(pid), run.pid)
    assert.deepStrictEqual(args, ["x y", ""])
  })
})

import { PrebuildView } from "@prbox/protocol"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { healthzGitImage } from "../../../packages/engine/test/git-image.ts"
import { removePrebuildsOf } from "../../../packages/engine/test/prebuild-support.ts"
import { gitSync, makeRemote, pushPullRequest, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { writeConfig } from "../../daemon/test/support.ts"
import { decode, hasStackTrace, makeHome, prbox, tearDown } from "./support.ts"

const Made = Schema.Struct({ outcome: Schema.String, prebuild: PrebuildView })

const devcontainer = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ image: healthzGitImage(), onCreateCommand: "mkdir -p deps && echo made > deps/made", ...extra })

/** main moved to a new commit with `files` on top of it. */
const moveMain = (remote: TestRemote, files: Record<string, string>) => {
  const commit = pushPullRequest(remote.path, 90, files)
  gitSync(remote.path, "update-ref", "refs/heads/main", commit)
  return commit
}

let home: string
let remote: TestRemote

beforeAll(async () => {
  home = makeHome("prebuild-make", { prebuilds: { maxGiB: 10, keepDays: 7 } })
  remote = makeRemote(home)
  const started = await prbox(home, ["daemon", "start"])
  expect(started.code, started.stderr).toBe(0)
})

afterAll(async () => {
  await tearDown(home)
  await Effect.runPromise(removePrebuildsOf(home))
})

describe("prbox prebuild <pull-request-or-repository>", () => {
  it("makes the base's prebuild, then says up to date, a new key is made, and a moved base is refreshed", async () => {
    const base = moveMain(remote, { ".devcontainer/devcontainer.json": devcontainer() })
    const made = await prbox(home, ["prebuild", remote.path, "--pr", "1", "--json"])
    expect(made.code, made.stderr).toBe(0)
    const first = decode(Made, made.stdout)
    expect([first.outcome, first.prebuild.state, first.prebuild.baseCommit]).toEqual(["made", "ready", base])

    const again = await prbox(home, ["prebuild", remote.path, "--pr", "1"])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain(`prebuild ${first.prebuild.id} of `)
    expect(again.stdout).toContain(`main@${base.slice(0, 7)}: up to date`)

    // The same commit with another environment key (config.json's env reaches the container): made anew.
    writeConfig(home, { prebuilds: { maxGiB: 10, keepDays: 7 }, env: { PREBUILD_TEST: "1" } })
    const rekeyed = decode(Made, (await prbox(home, ["prebuild", remote.path, "--pr", "1", "--json"])).stdout)
    expect(rekeyed.outcome).toBe("made")
    expect(rekeyed.prebuild.key).not.toBe(first.prebuild.key)

    const moved = moveMain(remote, { ".devcontainer/devcontainer.json": devcontainer(), "next.txt": "next" })
    const refresh = await prbox(home, ["prebuild", remote.path, "--pr", "1", "--json"])
    expect(refresh.code, refresh.stderr).toBe(0)
    const refreshed = decode(Made, refresh.stdout)
    expect([refreshed.outcome, refreshed.prebuild.baseCommit, refreshed.prebuild.key]).toEqual([
      "refreshed",
      moved,
      rekeyed.prebuild.key
    ])
  }, 240_000)

  it("a repository without a PR: its default branch's; with the warm pool on, an environment without create-time steps too; --ref alone refused", async () => {
    writeConfig(home, { prebuilds: { maxGiB: 10, keepDays: 7 } })
    // An environment of its own (its name is in the key): made, not a refresh of the test's before.
    const own = devcontainer({ name: "the repository form" })
    const base = moveMain(remote, { ".devcontainer/devcontainer.json": own, "repo.txt": "repo" })
    const made = await prbox(home, ["prebuild", remote.path, "--json"])
    expect(made.code, made.stderr).toBe(0)
    const first = decode(Made, made.stdout)
    expect([first.outcome, first.prebuild.state, first.prebuild.baseBranch, first.prebuild.baseCommit]).toEqual([
      "made",
      "ready",
      "main",
      base
    ])

    const plain = moveMain(remote, { ".devcontainer/devcontainer.json": JSON.stringify({ image: healthzGitImage() }) })
    const off = await prbox(home, ["prebuild", remote.path])
    expect(off.code).toBe(1)
    expect(off.stderr).toContain("has no onCreateCommand or updateContentCommand, and the warm pool is off")
    writeConfig(home, { prebuilds: { maxGiB: 10, keepDays: 7 }, warmPool: { size: 1, idleMinutes: 30 } })
    const pooled = await prbox(home, ["prebuild", remote.path, "--json"])
    expect(pooled.code, pooled.stderr).toBe(0)
    const stepless = decode(Made, pooled.stdout)
    expect([stepless.outcome, stepless.prebuild.state, stepless.prebuild.baseCommit]).toEqual(["made", "ready", plain])

    const ref = await prbox(home, ["prebuild", remote.path, "--ref", "main"])
    expect(ref.code).not.toBe(0)
    expect(ref.stderr).toContain("--ref names a pull request's head: pass --pr N with it")
    for (const run of [off, ref]) expect(hasStackTrace(run.stdout + run.stderr)).toBe(false)
  }, 240_000)

  it("refusals: today's path, prebuilds off, a repository that cannot be fetched, no input; no stack trace", async () => {
    writeConfig(home, { prebuilds: { maxGiB: 10, keepDays: 7 } })
    moveMain(remote, { ".devcontainer/devcontainer.json": JSON.stringify({ image: healthzGitImage() }) })
    const noSteps = await prbox(home, ["prebuild", remote.path, "--pr", "1"])
    expect(noSteps.code).toBe(1)
    expect(noSteps.stderr).toContain("main starts with today's path: its environment has no onCreateCommand")

    moveMain(remote, {
      ".devcontainer/devcontainer.json": JSON.stringify({
        dockerComposeFile: "compose.yaml",
        service: "app",
        onCreateCommand: "true"
      }),
      ".devcontainer/compose.yaml": "services:\n  app:\n    image: busybox\n"
    })
    const compose = await prbox(home, ["prebuild", remote.path, "--pr", "1"])
    expect(compose.code).toBe(1)
    expect(compose.stderr).toContain("main starts with today's path: ")

    const missing = await prbox(home, ["prebuild", `${home}/no-such.git`, "--pr", "1"])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr.length).toBeGreaterThan(0)

    const bare = await prbox(home, ["prebuild"])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain("say which repository")

    writeConfig(home, { prebuilds: false })
    const off = await prbox(home, ["prebuild", remote.path, "--pr", "1"])
    expect(off.code).toBe(1)
    expect(off.stderr).toContain('prebuilds are off ("prebuilds": false in config.json)')
    for (const run of [noSteps, compose, missing, bare, off]) expect(hasStackTrace(run.stdout + run.stderr)).toBe(false)
  })
})

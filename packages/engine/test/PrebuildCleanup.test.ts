import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { PREBUILD_LABELS, type Prebuild } from "@prbox/domain"
import { PrebuildRepo } from "@prbox/store"
import { Deferred, Effect, Fiber } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { Installation, MakePrebuild, PREBUILD_HOME_LABEL, PrebuildCleanup } from "../src/index.ts"
import { healthzTag, withEngine } from "./harness.ts"

const DAY = 86_400_000

const row = (id: string, overrides: Partial<Prebuild> = {}): Prebuild => ({
  id,
  key: `key-${id}`,
  host: "localhost",
  repository: "acme/widgets",
  baseBranch: "main",
  baseCommit: "a".repeat(40),
  image: null,
  volume: `prbox-prebuild-${id}`,
  sizeBytes: 1024,
  state: "ready",
  error: null,
  startedAt: Date.now() - DAY,
  readyAt: Date.now() - DAY,
  usedAt: null,
  ...overrides
})

const lines = (args: ReadonlyArray<string>) =>
  execFileSync("docker", args, { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

/** A prebuild's volume (and, when `running`, its container) as MakePrebuild labels them, made by the test. */
const leave = (home: string, install: string, id: string, running: boolean) => {
  const labels = [
    `${PREBUILD_LABELS.prebuild}=${id}`,
    `${PREBUILD_HOME_LABEL}=${home}`,
    `dev.prbox.install=${install}`,
    `${TEST_RUN_LABEL}=${inject("testRunId")}`
  ].flatMap((label) => ["--label", label])
  execFileSync("docker", ["volume", "create", ...labels, `prbox-prebuild-${id}`], { stdio: "ignore" })
  if (!running) return
  execFileSync(
    "docker",
    [
      "run",
      "-d",
      ...labels,
      "-v",
      `prbox-prebuild-${id}:/workspace`,
      "--entrypoint",
      "/bin/sh",
      healthzTag,
      "-c",
      "sleep 600"
    ],
    { stdio: "ignore" }
  )
}

const volumeExists = (id: string) => lines(["volume", "ls", "-q", "--filter", `name=^prbox-prebuild-${id}$`]).length > 0
const containersOf = (id: string) => lines(["ps", "-aq", "--filter", `label=${PREBUILD_LABELS.prebuild}=${id}`])
const removeVolumes = (ids: ReadonlyArray<string>) =>
  Effect.sync(() =>
    execFileSync("docker", ["volume", "rm", "-f", ...ids.map((id) => `prbox-prebuild-${id}`)], { stdio: "ignore" })
  )

describe("prebuilds' reconcile and gc", () => {
  it.live(
    "reconcile after a daemon killed mid-build (its state made by hand: a making row, its running container, its volume): the row failed, container and volume gone; a ready one kept",
    () =>
      withEngine({}, ({ home }) =>
        Effect.gen(function* () {
          const install = (yield* Installation).id
          const repo = yield* PrebuildRepo
          yield* repo.insert(row("crashed", { state: "making", readyAt: null, volume: null, sizeBytes: null }))
          yield* repo.insert(row("kept"))
          leave(home, install, "crashed", true)
          leave(home, install, "kept", false)
          leave(home, install, "norow", false)
          const report = yield* (yield* PrebuildCleanup).reconcile()
          assert.deepStrictEqual(report.failures, [])
          assert.strictEqual((yield* repo.get("crashed"))?.state, "failed")
          assert.deepStrictEqual(containersOf("crashed"), [], "no orphan container")
          assert.isFalse(volumeExists("crashed"), "no orphan volume")
          assert.isFalse(volumeExists("norow"), "a volume with no row goes")
          assert.isTrue(volumeExists("kept"), "a ready prebuild's volume stays")
          assert.strictEqual((yield* repo.get("kept"))?.state, "ready")
        }).pipe(Effect.ensuring(removeVolumes(["crashed", "kept", "norow"])))
      ),
    120_000
  )

  it.live(
    "gc removes an expired prebuild (volume and row), never one an open copies from, and keeps a fresh one",
    () =>
      withEngine({ config: { prebuilds: { maxGiB: 10, keepDays: 7 } } }, ({ home }) =>
        Effect.gen(function* () {
          const install = (yield* Installation).id
          const repo = yield* PrebuildRepo
          const maker = yield* MakePrebuild
          const old = Date.now() - 30 * DAY
          yield* repo.insert(row("expired", { readyAt: old, startedAt: old }))
          yield* repo.insert(row("copied", { readyAt: old, startedAt: old }))
          yield* repo.insert(row("fresh"))
          for (const id of ["expired", "copied", "fresh"]) leave(home, install, id, false)
          const entered = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const copying = yield* Effect.forkChild(
            maker.using("copied", Effect.andThen(Deferred.succeed(entered, undefined), Deferred.await(release)))
          )
          yield* Deferred.await(entered)
          const report = yield* (yield* PrebuildCleanup).collect()
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(copying)
          assert.deepStrictEqual(report.failures, [])
          assert.isUndefined(yield* repo.get("expired"))
          assert.isFalse(volumeExists("expired"))
          assert.isDefined(yield* repo.get("copied"), "in use: kept")
          assert.isTrue(volumeExists("copied"))
          assert.isDefined(yield* repo.get("fresh"))
          assert.isTrue(volumeExists("fresh"))
          const again = yield* (yield* PrebuildCleanup).collect()
          assert.isUndefined(yield* repo.get("copied"), "once no open copies from it, it goes")
          assert.lengthOf(again.changes, 1)
        }).pipe(Effect.ensuring(removeVolumes(["expired", "copied", "fresh"])))
      ),
    120_000
  )
})

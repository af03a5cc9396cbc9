/**
 * The engine in a process of its own, killed while a folder operation holds
 * its helper container: it reads a folder of its home through the runtime
 * (a never-started helper, removed with the read's scope), prints
 * `PHASE mid-folder-read` (synchronously) once the helper exists, and blocks
 * forever; the parent kills it with SIGKILL, so the helper is never removed.
 *
 * Usage: node helper-child.ts mid-folder-read, with PRBOX_HOME and
 * PRBOX_CRASH_RUN_ID in the environment.
 */
import { mkdirSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { TEST_RUN_LABEL } from "../../../../scripts/testing/global-setup.ts"
import { ContainerRuntime } from "../../src/index.ts"
import { engineLayer } from "../engine-layer.ts"
import { CHILD_ENV, HELPER_PHASE, phaseLine, runChild } from "./phases.ts"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is not set`)
  return value
}

if (process.argv[2] === HELPER_PHASE) {
  const home = env(CHILD_ENV.home)
  const runId = env(CHILD_ENV.runId)
  const folder = join(home, "read-me")
  mkdirSync(folder, { recursive: true })
  runChild(
    HELPER_PHASE,
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      // The read's helper lives as long as this scope: the kill lands while it does.
      yield* runtime.readFolder(folder, ".", { [TEST_RUN_LABEL]: runId })
      writeSync(1, `${phaseLine(HELPER_PHASE)}\n`)
      return yield* Effect.never
    }).pipe(Effect.provide(engineLayer({ home, runId, config: {} })))
  )
}

import { Effect } from "effect"
import { afterAll, expect, inject, it } from "vitest"
import { containerExists } from "../../../packages/engine/test/crash/agree.ts"
import { helpersOf, killMidFolderRead, removeHelpersOf } from "../../../packages/engine/test/crash/helper-kill.ts"
import { type Daemon, makeHome, removeHome, startDaemon } from "./support.ts"

/**
 * An engine killed with SIGKILL while a folder read's helper container
 * existed leaves it behind; the next daemon's start on that home removes
 * it and says so in its log, naming the container.
 */

const home = makeHome("helpers")
let daemon: Daemon | undefined

afterAll(async () => {
  await daemon?.stop()
  removeHelpersOf(home)
  removeHome(home)
})

it("a helper container a killed engine left is removed at the daemon's start, said in its log", async () => {
  const killed = await Effect.runPromise(killMidFolderRead(home, inject("testRunId")))
  expect(killed.signal, killed.stderr).toBe("SIGKILL")
  const left = helpersOf(home).map((helper) => helper.id)
  expect(left, "the kill left the read's helper").toHaveLength(1)
  const [helper] = left as [string]

  daemon = await startDaemon(home)
  expect(daemon.output()).toContain(`reconcile helpers: removed ${helper}, left by a killed daemon`)
  expect(containerExists(helper), "the helper is still there after the start").toBe(false)
}, 120_000)

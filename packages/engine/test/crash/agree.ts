import { execFileSync, spawn, spawnSync } from "node:child_process"
import { assert } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Cause, Effect } from "effect"
import { bounded } from "../harness.ts"

/**
 * What every crash row judges by: the home's containers as Docker lists
 * them, rows and containers agreeing, and a child engine killed with
 * SIGKILL once it printed its phase's line.
 */

export interface Container {
  readonly id: string
  readonly state: string
}

export const containersOfHome = (home: string): Array<Container> =>
  execFileSync(
    "docker",
    ["ps", "-a", "--no-trunc", "--filter", `label=dev.prbox.home=${home}`, "--format", "{{.ID}} {{.State}}"],
    { encoding: "utf8" }
  )
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      const [id = "", state = ""] = line.split(" ")
      return { id, state }
    })

export const containerExists = (id: string): boolean =>
  spawnSync("docker", ["inspect", id], { stdio: "ignore" }).status === 0

export const short = (id: string | null): string => (id === null ? "none" : id.slice(0, 12))

export const describeRow = (row: Sandbox): string =>
  [
    row.status,
    row.error === null ? "" : `(${row.error})`,
    row.destroyFenced ? "fenced" : "",
    row.legacyRetiredAt === null ? "" : "retired",
    `ctr ${short(row.containerId)}`
  ]
    .filter((part) => part.length > 0)
    .join(" ")

export const describeContainers = (containers: ReadonlyArray<Container>): string =>
  containers.length === 0 ? "none" : containers.map((c) => `${short(c.id)} ${c.state}`).join(", ")

/**
 * Guarantee 5 over every row and every container of the home: no running
 * container without a running/starting row (`alsoOwned`: the running
 * containers something else owns, as the warm pool's ready entries), no row
 * in a pre-container state, no row pointing at a container that is gone.
 */
export const assertRowsAndContainersAgree = (
  rows: ReadonlyArray<Sandbox>,
  containers: ReadonlyArray<Container>,
  alsoOwned: ReadonlySet<string> = new Set()
) => {
  for (const container of containers.filter((c) => c.state === "running" && !alsoOwned.has(c.id))) {
    const owner = rows.find((row) => row.containerId === container.id)
    assert.isTrue(
      owner !== undefined && (owner.status === "running" || owner.status === "starting"),
      `container ${short(container.id)} runs but no running/starting row claims it (${owner === undefined ? "no row" : describeRow(owner)})`
    )
  }
  for (const row of rows) {
    const preContainer = row.status === "creating" || row.status === "cloning" || row.status === "starting"
    assert.isFalse(
      preContainer && row.containerId === null,
      `row ${row.id} is left in a pre-container state: ${describeRow(row)}`
    )
    if (row.containerId !== null) {
      assert.isTrue(
        containerExists(row.containerId),
        `row ${row.id} points at a container that is gone: ${describeRow(row)}`
      )
    }
  }
}

/** Notes why a crash row failed in its table entry (the table is printed once every row ran). */
export const recordViolation =
  (table: ReadonlyArray<{ readonly phase: string; outcome: string }>, phase: string) =>
  <A, E, R>(row: Effect.Effect<A, E, R>) =>
    Effect.tapCause(row, (cause) =>
      Effect.sync(() => {
        const error = Cause.squash(cause)
        const entry = table.find((e) => e.phase === phase)
        if (entry !== undefined)
          entry.outcome = `VIOLATION: ${(error instanceof Error ? error.message : String(error)).split(": expected")[0]}`
      })
    )

export interface Killed {
  /** The phase line the child printed, if it got there. */
  readonly reached: string | undefined
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

/**
 * Runs `node <script> <phase>` until it prints `expected` (a whole line, or
 * its start before a space), kills it with SIGKILL then, and resolves once
 * it is dead.
 */
export const killChildAt = (options: {
  readonly script: string
  readonly phase: string
  readonly expected: string
  readonly env: Readonly<Record<string, string>>
  readonly seconds: number
}) =>
  Effect.callback<Killed>((resume) => {
    const child = spawn(process.execPath, [options.script, options.phase], {
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const { expected } = options
    let reached: string | undefined
    let pending = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (pending + chunk).split("\n")
      pending = lines.pop() ?? ""
      const line = lines.find((l) => l === expected || l.startsWith(`${expected} `))
      if (reached === undefined && line !== undefined) {
        reached = line
        if (child.pid !== undefined) process.kill(child.pid, "SIGKILL")
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("close", (_code, signal) => resume(Effect.succeed({ reached, signal, stderr })))
    // Only when the wait is cut short (the bound below).
    return Effect.sync(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    })
  }).pipe(bounded(`the child never reached ${options.phase}`, options.seconds))

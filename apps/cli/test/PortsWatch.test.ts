import { type ChildProcess, spawn } from "node:child_process"
import type { PreviewPort } from "@prbox/domain"
import { Previews, PreviewUnavailable } from "@prbox/engine"
import { PortList } from "@prbox/protocol"
import { Effect, Layer, Schema } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { runInProcess } from "../../daemon/test/support.ts"
import { CLI_MAIN, hasStackTrace, makeHome, removeHome, seedEndedRows, until } from "./support.ts"

/**
 * `prbox ports -w` against a daemon run in this process whose `Previews` is
 * scripted (the engine's discovery is tested with real sandboxes where it is
 * wired): the test decides what listens, the real CLI must notice.
 */

const ID = "abcdefghijkl"
const PREVIEW_PORT = 47124
/** What listens now, by port; 3000 is declared, the others are discovered. */
const listening = new Set<number>()
/** How many times the daemon was asked for the ports: a poll that found nothing new is seen here. */
let asked = 0

const ports = (): ReadonlyArray<PreviewPort> => [
  { port: 3000, label: "web", source: "config", onAutoForward: null, listening: listening.has(3000), public: false },
  ...[...listening]
    .filter((port) => port !== 3000)
    .sort((a, b) => a - b)
    .map((port) => ({
      port,
      label: null,
      source: "discovered" as const,
      onAutoForward: null,
      listening: true,
      public: false
    }))
]

const scripted = Layer.succeed(
  Previews,
  Previews.of({
    previewPort: PREVIEW_PORT,
    connect: (id) => Effect.fail(new PreviewUnavailable({ id, reason: "not in this test" })),
    ports: () =>
      Effect.sync(() => {
        asked++
        return ports()
      }),
    token: () => Effect.succeed("t"),
    verifyToken: () => Effect.succeed(false),
    verifyPassword: () => Effect.succeed(false),
    setPublic: () => Effect.void,
    isPublic: () => Effect.succeed(false)
  })
)

let home: string
let daemon: { readonly stop: () => Promise<void> } | undefined

beforeAll(async () => {
  home = makeHome("ports-watch")
  await seedEndedRows(home, [[ID, 5]])
  daemon = await runInProcess(home, scripted)
})

afterAll(async () => {
  await daemon?.stop()
  if (home !== undefined) removeHome(home)
})

interface Watching {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exit: Promise<number | null>
}

let watching: Watching | undefined

/** The real CLI, left running: its output so far, and its exit. */
const watch = (args: ReadonlyArray<string>): Watching => {
  const child = spawn(process.execPath, [CLI_MAIN, "ports", ID, "-w", ...args], {
    env: { ...process.env, PRBOX_HOME: home },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8")
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
  watching = { child, stdout: () => stdout, stderr: () => stderr, exit }
  return watching
}

afterEach(() => {
  watching?.child.kill("SIGKILL")
  watching = undefined
  listening.clear()
})

describe("prbox ports -w", () => {
  it("prints the table, then a line when a port starts or stops listening; Ctrl-C ends it without a trace", async () => {
    const run = watch([])
    await until("the table", () => run.stdout().includes("3000  web"), { timeoutMs: 60_000 })
    expect(run.stdout().split("\n")[0]).toMatch(/^PORT\s+LABEL\s+SOURCE\s+LISTENING\s+ACCESS\s+URL$/)
    listening.add(5173)
    await until("5173 to be reported", () => run.stdout().includes("5173 is listening"))
    expect(run.stdout()).toMatch(
      /\n\d\d:\d\d:\d\d 5173 is listening: http:\/\/5173\.abcdefghijkl\.localhost:47124\/ \(private\)\n/
    )
    listening.add(3000)
    await until("3000 to be reported", () => run.stdout().includes("3000 (web) is listening"))
    listening.delete(5173)
    await until("5173 to go", () => run.stdout().includes("5173 stopped listening"))
    // Each change once: polling on with nothing new prints nothing.
    expect(run.stdout().match(/5173 is listening/g)).toHaveLength(1)
    run.child.kill("SIGINT")
    const code = await run.exit
    expect(code).toBe(130)
    expect(run.stderr()).toBe("")
    expect(hasStackTrace(run.stderr())).toBe(false)
  })

  it("--json: one PortList per line, the first at once, then one per change", async () => {
    const run = watch(["--json"])
    const lines = () =>
      run
        .stdout()
        .split("\n")
        .filter((line) => line.length > 0)
    await until("the first list", () => lines().length >= 1, { timeoutMs: 60_000 })
    listening.add(8080)
    await until("a second list", () => lines().length >= 2)
    // Two more polls with nothing new: nothing more printed.
    const polls = asked
    await until("two more polls", () => asked >= polls + 2)
    expect(lines()).toHaveLength(2)
    const lists = lines().map((line) => Schema.decodeUnknownSync(PortList)(JSON.parse(line)))
    expect(lists[0]?.ports.map((port) => port.port)).toEqual([3000])
    expect(lists[1]?.ports.map((port) => [port.port, port.listening])).toEqual([
      [3000, false],
      [8080, true]
    ])
    run.child.kill("SIGINT")
    expect(await run.exit).toBe(130)
    expect(run.stderr()).toBe("")
  })
})

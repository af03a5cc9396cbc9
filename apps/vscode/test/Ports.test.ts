import { SandboxId } from "@prbox/domain"
import { afterEach, describe, expect, it, vi } from "vitest"
import { portList, portView } from "../../../packages/protocol/test/ports.ts"
import { Daemon } from "../src/Daemon.ts"
import { commandTable } from "../src/Handlers.ts"
import { LogFollowers } from "../src/Logs.ts"
import { CommandId } from "../src/Model.ts"
import { portNode, portNodes, portToAutoOpen } from "../src/PortNodes.ts"
import { PORTS_POLL_MS, PortWatch } from "../src/Ports.ts"
import type { PortList } from "../src/Protocol.ts"
import { resolveSettings } from "../src/Settings.ts"
import { RecordingSink, RecordingUi } from "./support.ts"

const ID = SandboxId.make("aaaaaaaaaaa1")
const OTHER = SandboxId.make("aaaaaaaaaaa2")

const port = portView
const list = portList

describe("port nodes under a running sandbox", () => {
  it("shows label and port, access and whether it listens; only a listening one opens", () => {
    const node = portNode(ID, port(3000, { label: "web" }))
    expect(node).toMatchObject({
      kind: "port",
      id: "aaaaaaaaaaa1/port/3000",
      sandboxId: ID,
      label: "3000 (web)",
      description: "private · listening",
      contextValue: "port.listening"
    })
    expect(node.tooltip).toContain("http://3000.abcdefghijkl.localhost:47000/")
    expect(node.tooltip).toContain("prbox preview-token aaaaaaaaaaa1")
    const closed = portNode(ID, port(8000, { listening: false, public: true }))
    expect(closed).toMatchObject({ label: "8000", description: "public · not listening", contextValue: "port.closed" })
  })

  it("in the daemon's order; nothing before the first answer; a failed answer says so", () => {
    expect(portNodes(ID, { _tag: "ports", list: list(port(5173), port(3000)) }).map((node) => node.id)).toEqual([
      "aaaaaaaaaaa1/port/5173",
      "aaaaaaaaaaa1/port/3000"
    ])
    expect(portNodes(ID, undefined)).toEqual([])
    expect(portNodes(ID, { _tag: "unavailable", message: "made before previews" })).toEqual([
      expect.objectContaining({ kind: "note", label: "Ports unavailable", tooltip: "made before previews" })
    ])
  })
})

describe("onAutoForward: openBrowser", () => {
  const web = (listening: boolean) => port(3000, { onAutoForward: "openBrowser", listening })
  const cases: ReadonlyArray<
    readonly [
      name: string,
      previous: PortList | undefined,
      next: PortList,
      opened: ReadonlyArray<number>,
      open?: number
    ]
  > = [
    ["the first answer is the baseline", undefined, list(web(true)), []],
    ["opens when it starts listening", list(web(false)), list(web(true)), [], 3000],
    ["opens when it first appears listening", list(), list(web(true)), [], 3000],
    ["not while it keeps listening", list(web(true)), list(web(true)), []],
    ["once per port", list(web(false)), list(web(true)), [3000]],
    ["not a port marked otherwise", list(), list(port(3000, { onAutoForward: "notify" })), []],
    ["not a port that does not listen", list(), list(web(false)), []],
    [
      "the first of several at once",
      list(),
      list(port(9000, { onAutoForward: "openBrowser" }), port(4000, { onAutoForward: "openBrowser" })),
      [],
      9000
    ]
  ]
  for (const [name, previous, next, opened, open] of cases) {
    it(name, () => expect(portToAutoOpen(previous, next, new Set(opened))?.port).toBe(open))
  }
})

/** The daemon's `ports` call, faked (the extension's own poller is what is under test), answering from a script. */
const fakeDaemon = () => {
  const answers = new Map<SandboxId, Array<PortList | Error>>()
  const asked: Array<SandboxId> = []
  return {
    asked,
    answer: (id: SandboxId, ...next: Array<PortList | Error>) => answers.set(id, next),
    fetch: async (id: SandboxId) => {
      asked.push(id)
      const queue = answers.get(id) ?? []
      const next = queue.length > 1 ? queue.shift() : queue[0]
      if (next === undefined || next instanceof Error) throw next ?? new Error("no answer scripted")
      return next
    }
  }
}

describe("PortWatch (a fake daemon's ports call)", () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("opens an openBrowser port once when it starts listening, across polls", async () => {
    const daemon = fakeDaemon()
    const opened: Array<string> = []
    const watch = new PortWatch({
      running: () => [ID],
      fetch: daemon.fetch,
      open: async (url) => void opened.push(url)
    })
    const web = (listening: boolean) => port(3000, { onAutoForward: "openBrowser", listening })
    daemon.answer(ID, list(web(false)), list(web(true)), list(web(true)), list(web(false)), list(web(true)))
    for (let round = 0; round < 5; round++) await watch.poll()
    expect(opened).toEqual(["http://3000.abcdefghijkl.localhost:47000/"])
  })

  it("keeps the latest answer per running sandbox, says when one failed, forgets one that stopped", async () => {
    const daemon = fakeDaemon()
    let running = [ID, OTHER]
    const watch = new PortWatch({ running: () => running, fetch: daemon.fetch, open: async () => {} })
    let changes = 0
    watch.onDidChange(() => changes++)
    daemon.answer(ID, list(port(3000)))
    daemon.answer(OTHER, new Error("previews of sandbox aaaaaaaaaaa2 are unavailable: rebuild it"))
    await watch.poll()
    expect(watch.state(ID)).toEqual({ _tag: "ports", list: list(port(3000)) })
    expect(watch.state(OTHER)).toEqual({
      _tag: "unavailable",
      message: "previews of sandbox aaaaaaaaaaa2 are unavailable: rebuild it"
    })
    expect(changes).toBe(1)
    // The same answers again: nothing to redraw.
    await watch.poll()
    expect(changes).toBe(1)
    running = [ID]
    await watch.poll()
    expect(watch.state(OTHER)).toBeUndefined()
    expect(changes).toBe(2)
  })

  it("asks every 2 s only while the view is visible", async () => {
    vi.useFakeTimers()
    const daemon = fakeDaemon()
    daemon.answer(ID, list(port(3000)))
    const watch = new PortWatch({ running: () => [ID], fetch: daemon.fetch, open: async () => {} })
    await vi.advanceTimersByTimeAsync(10 * PORTS_POLL_MS)
    expect(daemon.asked).toEqual([])
    watch.setVisible(true)
    // At once when it shows, then every 2 s.
    await vi.advanceTimersByTimeAsync(0)
    expect(daemon.asked).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(2 * PORTS_POLL_MS)
    expect(daemon.asked).toHaveLength(3)
    watch.setVisible(false)
    await vi.advanceTimersByTimeAsync(10 * PORTS_POLL_MS)
    expect(daemon.asked).toHaveLength(3)
    watch.setVisible(true)
    await vi.advanceTimersByTimeAsync(0)
    expect(daemon.asked).toHaveLength(4)
    watch.dispose()
    await vi.advanceTimersByTimeAsync(10 * PORTS_POLL_MS)
    expect(daemon.asked).toHaveLength(4)
  })
})

describe("Open Port in Browser", () => {
  it("opens the preview URL of the port node it was invoked on, without asking the daemon", async () => {
    // A daemon on a socket nothing listens on: the node carries everything the command needs.
    const daemon = new Daemon(resolveSettings({ home: "/nonexistent/prbox-home" }))
    const logs = new LogFollowers(daemon, (name) => new RecordingSink(name))
    const ui = new RecordingUi()
    const table = new Map(commandTable({ ui, daemon, logs, baseDir: () => "/" }))
    await table.get(CommandId.openPortInBrowser)?.(portNode(ID, port(3000)))
    expect(ui.opened).toEqual(["http://3000.abcdefghijkl.localhost:47000/"])
    expect(ui.errors).toEqual([])
    logs.dispose()
    await daemon.dispose()
  })
})

import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { get } from "node:http"
import { join } from "node:path"
import { PortList } from "@prbox/protocol"
import { chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import {
  holdConnections,
  hostOf,
  portsOf,
  preview,
  previewHome,
  startApp,
  stopApp,
  tokenOf
} from "./preview-support.ts"
import { CLI_MAIN, call, decode, prbox, socketOf, tearDown, until } from "./support.ts"

let home: string
let remote: TestRemote
let one = ""
let two = ""
let previewPort = 0
let token = ""

/** The daemon `prbox open` starts gets these bounds: small, so the tests reach them. */
const LIMITS = { PRBOXD_PREVIEW_MAX_PER_SANDBOX: "12", PRBOXD_PREVIEW_IDLE_TIMEOUT_MS: "3000" }

const openPr = async (pr: number): Promise<string> => {
  const run = await prbox(home, ["open", remote.path, "--pr", String(pr)], LIMITS)
  const id = /sandbox ([a-z0-9]{12}) is running/.exec(run.stdout)?.[1]
  if (id === undefined) throw new Error(`open failed: ${run.stdout}${run.stderr}`)
  return id
}

const listening = async (id: string, port: number) =>
  (await portsOf(home, id)).ports.some((entry) => entry.port === port && entry.listening)

const bearer = () => ({ authorization: `Bearer ${token}` })

/** The daemon's resident memory in KiB (its pid is in the lock file). */
const daemonRssKib = (): number => {
  const pid = Number(readFileSync(join(home, "run", "prboxd.lock"), "utf8").trim())
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "NaN")
}

beforeAll(async () => {
  home = previewHome("preview")
  remote = makeRemote(home)
  one = await openPr(1)
  two = await openPr(2)
  await startApp(home, one, 3000, "0.0.0.0", "one")
  await startApp(home, one, 3001, "127.0.0.1", "one-local")
  await startApp(home, two, 3000, "0.0.0.0", "two")
  for (const [id, port] of [
    [one, 3000],
    [one, 3001],
    [two, 3000]
  ] as const) {
    await until(`port ${port} of ${id} to be discovered`, () => listening(id, port), {
      timeoutMs: 15_000,
      intervalMs: 200
    })
  }
  previewPort = (await portsOf(home, one)).previewPort
  token = await tokenOf(home, one)
}, 300_000)

afterAll(async () => {
  await tearDown(home)
})

describe("previews through prboxd", () => {
  it("serves a port on 0.0.0.0 and one on 127.0.0.1 only at /, with a bearer token (host form)", async () => {
    const wide = await preview(previewPort, { host: hostOf(one, 3000, previewPort), headers: bearer() })
    expect(wide.status, wide.text).toBe(200)
    expect(wide.text).toContain("hello from one on 0.0.0.0:3000")
    expect(wide.text).toContain(`path / host ${hostOf(one, 3000, previewPort)}`)
    const local = await preview(previewPort, { host: hostOf(one, 3001, previewPort), headers: bearer() })
    expect(local.status, local.text).toBe(200)
    expect(local.text).toContain("hello from one-local on 127.0.0.1:3001")
  })

  it("the path form hands the app its own path, and takes the token but never the cookie", async () => {
    const host = `localhost:${previewPort}`
    const answer = await preview(previewPort, { host, path: `/s/${one}/3000/path/a?b=c`, headers: bearer() })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.text).toContain("path /path/a?b=c host")
    const cookie = await preview(previewPort, {
      host,
      path: `/s/${one}/3000/`,
      headers: { cookie: `prbox-preview=${token}` }
    })
    expect(cookie.status).toBe(401)
  })

  it("without a credential a script gets 401 and a browser is sent to log in", async () => {
    const host = hostOf(one, 3000, previewPort)
    const script = await preview(previewPort, { host })
    expect(script.status).toBe(401)
    expect(script.text).toContain(`prbox preview-token ${one}`)
    const browser = await preview(previewPort, { host, path: "/deep?x=1", headers: { accept: "text/html" } })
    expect(browser.status).toBe(302)
    expect(browser.headers.location).toBe(`/.prbox/login?next=${encodeURIComponent("/deep?x=1")}`)
  })

  it("never serves another sandbox's app, a forged Host or a foreign Origin", async () => {
    const otherToken = await tokenOf(home, two)
    const crossed = await preview(previewPort, {
      host: hostOf(one, 3000, previewPort),
      headers: { authorization: `Bearer ${otherToken}` }
    })
    expect(crossed.status).toBe(401)
    const mine = await preview(previewPort, {
      host: hostOf(two, 3000, previewPort),
      headers: { authorization: `Bearer ${otherToken}` }
    })
    expect(mine.text).toContain("hello from two")
    const forged = await preview(previewPort, { host: `evil.example:${previewPort}`, headers: bearer() })
    expect(forged.status).toBe(403)
    const wrongPort = await preview(previewPort, { host: `3000.${one}.localhost:1`, headers: bearer() })
    expect(wrongPort.status).toBe(403)
    for (const origin of ["http://evil.example", `http://3000.${two}.localhost:${previewPort}`, "null"]) {
      const answer = await preview(previewPort, {
        host: hostOf(one, 3000, previewPort),
        headers: { ...bearer(), origin }
      })
      expect(answer.status, origin).toBe(403)
    }
    const sibling = await preview(previewPort, {
      host: hostOf(one, 3000, previewPort),
      headers: { ...bearer(), origin: `http://3001.${one}.localhost:${previewPort}` }
    })
    expect(sibling.status).toBe(200)
    const unknown = await preview(previewPort, { host: hostOf("zzzzzzzzzzzz", 3000, previewPort), headers: bearer() })
    expect(unknown.status).toBe(404)
    const closed = await preview(previewPort, { host: hostOf(one, 3999, previewPort), headers: bearer() })
    expect(closed.status).toBe(404)
    expect(closed.text).toContain("nothing listens on port 3999")
  })

  it("bounds a sandbox's connections (503 past the cap) and ends idle ones", async () => {
    const held = await holdConnections(previewPort, hostOf(one, 3000, previewPort), token, 12)
    const refused = await preview(previewPort, { host: hostOf(one, 3000, previewPort), headers: bearer() })
    expect(refused.status).toBe(503)
    expect(refused.headers["retry-after"]).toBe("1")
    // Another sandbox has its own cap.
    const other = await preview(previewPort, {
      host: hostOf(two, 3000, previewPort),
      headers: { authorization: `Bearer ${await tokenOf(home, two)}` }
    })
    expect(other.status).toBe(200)
    // Released, each held connection idles past the timeout and the daemon closes it (a latch on `close`, no sleep).
    for (const connection of held) connection.release()
    await Promise.all(held.map((connection) => connection.closed))
    expect((await preview(previewPort, { host: hostOf(one, 3000, previewPort), headers: bearer() })).status).toBe(200)
  })

  it("the sandbox's commands see the preview URL template", async () => {
    const answer = await call(socketOf(home), {
      method: "POST",
      path: `/v1/sandboxes/${one}/exec`,
      body: JSON.stringify({ argv: ["sh", "-c", "echo $PRBOX_PREVIEW_URL_TEMPLATE $VSCODE_PROXY_URI"] })
    })
    const template = `http://{{port}}.${one}.localhost:${previewPort}/`
    expect((answer.json() as { stdout: string }).stdout.trim()).toBe(`${template} ${template}`)
  })

  it("a WebSocket echoes through the preview", async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${previewPort}/s/${one}/3000/ws`, { headers: bearer() } as never)
    const echoed = await new Promise<string>((resolve, reject) => {
      socket.onopen = () => socket.send("ping through prbox")
      socket.onmessage = (event) => resolve(String(event.data))
      socket.onerror = () => reject(new Error("WebSocket failed"))
    })
    // Closed before the next test, so its connection no longer counts against the sandbox's cap.
    const closed = new Promise((resolve) => (socket.onclose = resolve))
    socket.close()
    await closed
    expect(echoed).toBe("ping through prbox")
  })

  it("streams a 50 MB download while the daemon's memory grows by at most 32 MiB", async () => {
    const before = daemonRssKib()
    let peak = before
    let received = 0
    await new Promise<void>((resolve, reject) => {
      const req = get(
        {
          host: "127.0.0.1",
          port: previewPort,
          path: "/big?mb=50",
          headers: { ...bearer(), host: hostOf(one, 3000, previewPort) }
        },
        (res) => {
          res.on("data", (chunk: Buffer) => {
            received += chunk.length
            peak = Math.max(peak, daemonRssKib())
          })
          res.on("end", resolve)
          res.on("error", reject)
        }
      )
      req.on("error", reject)
    })
    expect(received).toBe(50 * 1024 * 1024)
    expect(peak - before).toBeLessThanOrEqual(32 * 1024)
  })

  it("prbox ports -w --json prints a list when a server starts listening (within 5 s) and when it stops", async () => {
    const child = spawn(process.execPath, [CLI_MAIN, "ports", one, "-w", "--json"], {
      env: { ...process.env, PRBOX_HOME: home },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    const lists = () =>
      stdout
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => decode(PortList, line))
    const has4000 = (list: PortList) => list.ports.some((entry) => entry.port === 4000 && entry.listening)
    try {
      await until("the first list", () => lists().length > 0, { timeoutMs: 10_000 })
      expect(has4000(lists()[0] as PortList)).toBe(false)
      await startApp(home, one, 4000, "0.0.0.0", "late")
      const listened = Date.now()
      await until("4000 in the watch", () => lists().some(has4000), { timeoutMs: 5_000 })
      expect(Date.now() - listened).toBeLessThan(5_000)
      await stopApp(home, one, 4000)
      await until("4000 gone from the watch", () => !has4000(lists().at(-1) as PortList), { timeoutMs: 5_000 })
      const once = await prbox(home, ["ports", one])
      expect(once.stdout).toMatch(new RegExp(`3000 .* http://3000\\.${one}\\.localhost:${previewPort}/`))
      expect(once.stdout).not.toContain("4000")
    } finally {
      child.kill("SIGINT")
    }
    expect(await exited).toBe(130)
  })

  it("a port out of range is refused by the API itself", async () => {
    const answer = await call(socketOf(home), {
      method: "POST",
      path: `/v1/sandboxes/${one}/ports/0/public`,
      body: JSON.stringify({ public: true })
    })
    expect(answer.status).toBe(400)
  })

  it("in Chromium: login once per sandbox opens all its ports, its WebSocket works, and not another sandbox", async () => {
    const password = (await prbox(home, ["password", one])).stdout.trim()
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    })
    try {
      const page = await browser.newPage()
      await page.goto(`http://${hostOf(one, 3000, previewPort)}/path/page?x=1`)
      expect(new URL(page.url()).pathname).toBe("/.prbox/login")
      await page.locator("input[type=password]").fill(password)
      await page.locator("button[type=submit]").click()
      await page.waitForURL(`http://${hostOf(one, 3000, previewPort)}/path/page?x=1`)
      expect(await page.textContent("body")).toContain("hello from one on 0.0.0.0:3000")
      const cookies = await page.context().cookies(`http://${hostOf(one, 3000, previewPort)}/`)
      expect(cookies.find((cookie) => cookie.name === "prbox-preview")).toMatchObject({
        domain: `.${one}.localhost`,
        httpOnly: true,
        sameSite: "Lax"
      })
      const echoed = await page.evaluate(
        () =>
          new Promise<string>((resolve, reject) => {
            // Runs in the page: its own origin, as ws://.
            const origin = (globalThis as unknown as { location: { origin: string } }).location.origin
            const socket = new WebSocket(`${origin.replace("http", "ws")}/ws`)
            socket.onopen = () => socket.send("from the browser")
            socket.onmessage = (event) => resolve(String(event.data))
            socket.onerror = () => reject(new Error("WebSocket failed"))
          })
      )
      expect(echoed).toBe("from the browser")
      // Another port of the same sandbox: the cookie covers it.
      await page.goto(`http://${hostOf(one, 3001, previewPort)}/`)
      expect(await page.textContent("body")).toContain("hello from one-local")
      // Another sandbox: the first one's cookie does not open it.
      await page.goto(`http://${hostOf(two, 3000, previewPort)}/`)
      expect(new URL(page.url()).pathname).toBe("/.prbox/login")
      expect(await page.textContent("body")).not.toContain("hello from two")
    } finally {
      await browser.close()
    }
  })

  it("preview-token prints the token, --public opens one port until the sandbox stops, then 503", async () => {
    const printed = await prbox(home, ["preview-token", two])
    expect(printed.code).toBe(0)
    expect(printed.stdout.trim()).toBe(await tokenOf(home, two))
    const host = hostOf(two, 3000, previewPort)
    expect((await preview(previewPort, { host })).status).toBe(401)
    const opened = await prbox(home, ["ports", two, "--public", "3000"])
    expect(opened.code, opened.stderr).toBe(0)
    expect((await preview(previewPort, { host })).status).toBe(200)
    expect((await preview(previewPort, { host: hostOf(two, 3001, previewPort) })).status).toBe(401)
    expect((await prbox(home, ["stop", two])).code).toBe(0)
    const stopped = await preview(previewPort, {
      host,
      headers: { authorization: `Bearer ${await tokenOf(home, two)}` }
    })
    expect(stopped.status).toBe(503)
    expect(stopped.text).toContain(`prbox restart ${two}`)
    expect((await prbox(home, ["restart", two])).code).toBe(0)
    expect((await preview(previewPort, { host })).status).toBe(401)
    // Eight whole CLI runs, a stop and a restart of code-server: a loaded CI machine took 58 s.
  }, 150_000)
})

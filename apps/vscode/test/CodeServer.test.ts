import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type BrowserContext, chromium, type Locator, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { makeRemote } from "../../../packages/git/test/helpers.ts"
import { writePullRequestFields } from "../../../packages/store/test/pull-request-rows.ts"
import { codeServerImage } from "../../../scripts/images/code-server.ts"
import { imageExists, imageTag } from "../../../scripts/images/images.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { prbox } from "../../cli/test/support.ts"
import { call, makeHome, type Daemon as Prboxd, removeHome, startDaemon, until } from "../../daemon/test/support.ts"
import { bundle, packageVsix } from "../scripts/package.ts"

/**
 * The packaged extension in a real VS Code: the code-server test image runs
 * with the daemon's socket directory bind-mounted at the same path, the
 * .vsix installed with `--install-extension`, and Chromium drives it.
 */
const REPO = fileURLToPath(new URL("../../../", import.meta.url))
const ARTIFACTS = join(REPO, "test-artifacts", "vscode")
const DOCS_SCREENSHOT = fileURLToPath(new URL("../docs/view.png", import.meta.url))
const image = imageTag(codeServerImage)

let home: string
let prboxd: Prboxd | undefined
let sandboxId = ""
let container = ""
let port = 0
const password = randomBytes(12).toString("hex")
const dirs: Array<string> = []
let browser: BrowserContext | undefined
let page: Page

const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

const docker = (args: ReadonlyArray<string>) => execFileSync("docker", args, { encoding: "utf8" }).trim()

const running = (id: string) => docker(["inspect", "--format", "{{.State.Running}}", id]) === "true"

const answers = async (url: string) => {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok
  } catch {
    return false
  }
}

/** Starts code-server on 127.0.0.1:<port> (host network, a password) with the .vsix installed. */
const startCodeServer = async (vsix: string) => {
  const data = tempDir("prbox-vscode-data-")
  mkdirSync(join(data, "User"), { recursive: true })
  writeFileSync(
    join(data, "User", "settings.json"),
    JSON.stringify({
      "prbox.home": home,
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "workbench.secondarySideBar.defaultVisibility": "hidden",
      "chat.disableAIFeatures": true,
      "telemetry.telemetryLevel": "off",
      "extensions.autoCheckUpdates": false
    })
  )
  port = await freePort()
  const flags = "--user-data-dir /data --extensions-dir /data/extensions"
  const uid = process.getuid?.() ?? 0
  const gid = process.getgid?.() ?? 0
  container = docker([
    "run",
    "--detach",
    "--init",
    "--label",
    `${TEST_RUN_LABEL}=${inject("testRunId")}`,
    "--network",
    "host",
    // As the owner of the socket (0600): the extension host runs in this container.
    "--user",
    `${uid}:${gid}`,
    "--env",
    `PASSWORD=${password}`,
    "--volume",
    `${join(home, "run")}:${join(home, "run")}`,
    "--volume",
    `${data}:/data`,
    "--volume",
    `${vsix}:/ext/prbox-vscode.vsix:ro`,
    "--entrypoint",
    "sh",
    image,
    "-c",
    `code-server ${flags} --install-extension /ext/prbox-vscode.vsix && exec code-server ${flags} --bind-addr 127.0.0.1:${port} --auth password --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override`
  ])
  await until(
    "code-server to answer /healthz",
    async () => {
      if (!running(container)) throw new Error(`code-server exited:\n${docker(["logs", container])}`)
      return answers(`http://127.0.0.1:${port}/healthz`)
    },
    { timeoutMs: 90_000, intervalMs: 250 }
  )
}

const screenshot = async (name: string) => {
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS, name) })
}

/** The daemon's word on the sandbox, over its socket. */
const statusOf = async (id: string) => {
  const answer = await call(join(home, "run", "prboxd.sock"), { path: `/v1/sandboxes/${id}` })
  const body = answer.json()
  return typeof body === "object" && body !== null && "status" in body ? body.status : undefined
}

beforeAll(async () => {
  if (!imageExists(image)) throw new Error(`${image} is missing: run scripts/setup --with-test-images`)
  await bundle()
  const vsix = packageVsix()

  home = makeHome("vscode-ui")
  const remote = makeRemote(home)
  prboxd = await startDaemon(home)
  const opened = await prbox(home, ["open", remote.path, "--pr", "1"])
  expect(opened.code, opened.stderr).toBe(0)
  sandboxId = /sandbox ([a-z0-9]{12}) is running/.exec(opened.stdout)?.[1] ?? ""
  expect(sandboxId).not.toBe("")
  // What a hosting service would have said of the PR (a local remote has none): the tree shows the title.
  writePullRequestFields(home, sandboxId, {
    title: "Add the widget",
    author: "octocat",
    pullRequestState: "open",
    baseRef: "main",
    closedSeenAt: null
  })

  await startCodeServer(vsix)
  browser = await chromium.launchPersistentContext(tempDir("prbox-vscode-chromium-"), {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 720 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  page = browser.pages()[0] ?? (await browser.newPage())
}, 240_000)

afterAll(async () => {
  await browser?.close()
  if (container !== "") docker(["rm", "--force", "--volumes", container])
  await prboxd?.stop()
  if (home !== undefined) removeHome(home)
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/**
 * A row's inline button, shown while the pointer is over the row: hovered
 * again until it shows, since an editor opening or the tree redrawing under a
 * loaded machine can move the row away from a single hover.
 */
const inlineAction = async (row: Locator, label: string): Promise<Locator> => {
  const action = row.locator(`.action-label[aria-label="${label}"]`)
  await expect
    .poll(
      async () => {
        await row.hover()
        return action.isVisible()
      },
      { timeout: 30_000 }
    )
    .toBe(true)
  return action
}

describe("the extension in code-server", () => {
  it("lists the sandbox as running after logging in", async () => {
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.locator("input[type=password]").fill(password)
    await page.locator("input[type=password]").press("Enter")
    await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 })
    await page.locator('.activitybar [aria-label="PR Sandboxes"]').first().click()
    const row = page.getByRole("treeitem", { name: "Add the widget, #1 · remote · running", exact: true })
    await row.waitFor({ timeout: 60_000 })
    await expect
      .poll(() => page.locator('[id="prbox.prbox-vscode.prbox.status"]').getAttribute("aria-label"))
      .toContain("1 running sandbox")
    await row.click()
    // Its children are things to look at: the PR's changed files (actions are the row's buttons and menu).
    await page.getByRole("treeitem", { name: "Changed Files", exact: true }).click()
    const file = page.getByRole("treeitem", { name: "pr1.txt (added)", exact: true })
    await file.waitFor({ timeout: 30_000 })
    expect(await page.getByRole("treeitem", { name: "Stop", exact: true }).count()).toBe(0)
    await file.click()
    // The diff editor, its sides read by the daemon from its mirror: the PR's text on the right.
    await page.locator('.tab[aria-label*="pr1.txt (PR: base ↔ head)"]').first().waitFor({ timeout: 30_000 })
    await page.locator(".editor.modified .view-lines", { hasText: "pr1.txt" }).first().waitFor({ timeout: 30_000 })
    await inlineAction(row, "Open in VS Code Desktop")
    await screenshot("view-running.png")
    // The README's picture, refreshed on request only: a test run leaves the work tree alone.
    if (process.env.PRBOX_UPDATE_DOCS === "1") await page.screenshot({ path: DOCS_SCREENSHOT })
  }, 120_000)

  it("Stop, the running row's button, stops the sandbox, and the view follows", async () => {
    const row = page.getByRole("treeitem", { name: "Add the widget, #1 · remote · running", exact: true })
    await (await inlineAction(row, "Stop")).click()
    await until("the daemon to report the sandbox stopped", async () => (await statusOf(sandboxId)) === "stopped", {
      timeoutMs: 60_000,
      intervalMs: 200
    })
    await page
      .getByRole("treeitem", { name: "Add the widget, #1 · remote · stopped", exact: true })
      .waitFor({ timeout: 30_000 })
    await screenshot("view-stopped.png")
  }, 120_000)
})

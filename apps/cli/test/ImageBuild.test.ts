import { chmodSync, copyFileSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DefaultImage } from "@prbox/engine/node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type InstalledPackage, installPackage } from "../../../scripts/package/install.ts"
import { hasStackTrace, makeHome, prbox, type RunAs, removeHome, runEntry } from "./support.ts"

const { DEFAULT_IMAGE } = DefaultImage

let home: string
let nodeDir: string
/** nobody, with a copy of this Node it can execute (the toolchain's may sit under root's home). */
let nobody: RunAs
/**
 * prbox installed as a package where nobody can read it: the checkout may
 * sit in a folder other users cannot enter (a clone under /root, a 0700
 * temporary folder), so nobody runs the installed CLI, not the sources.
 */
let installed: InstalledPackage

/** The installed CLI, run as nobody. */
const asNobody = (args: ReadonlyArray<string>) => runEntry(installed.prbox, home, args, { HOME: home }, nobody)

beforeAll(async () => {
  const prefix = realpathSync(mkdtempSync(join(tmpdir(), "prbox-prefix-")))
  chmodSync(prefix, 0o755)
  installed = await installPackage(prefix)
  home = makeHome("image")
  chmodSync(home, 0o755)
  nodeDir = mkdtempSync(join(tmpdir(), "prbox-node-"))
  chmodSync(nodeDir, 0o755)
  copyFileSync(process.execPath, join(nodeDir, "node"))
  chmodSync(join(nodeDir, "node"), 0o755)
  nobody = { uid: 65534, gid: 65534, node: join(nodeDir, "node") }
}, 600_000)

afterAll(() => {
  removeHome(home)
  rmSync(nodeDir, { recursive: true, force: true })
  rmSync(installed.prefix, { recursive: true, force: true })
})

describe("prbox image build", () => {
  it("is in the command table, and --help says it needs root and what to set instead", async () => {
    const top = await prbox(home, ["--help"])
    expect(top.code, top.stderr).toBe(0)
    expect(top.stdout).toMatch(/^\s+image\s/m)
    const help = await prbox(home, ["image", "build", "--help"])
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toMatch(/Needs root: run it with sudo/)
    expect(help.stdout).toMatch(/"image" in \$PRBOX_HOME\/config\.json/)
    expect(help.stdout).toMatch(/--json/)
  })

  it("refuses a user who is not root: exit 2, the command to run and the config key, nothing on stdout", async () => {
    const run = await asNobody(["image", "build"])
    expect(run.code, run.stderr).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(
      /^prbox: building prbox's default image needs root \(debootstrap\): run `sudo prbox image build`/
    )
    expect(run.stderr).toMatch(/set "image" in \$PRBOX_HOME\/config\.json/)
    expect(hasStackTrace(run.stderr)).toBe(false)
  })

  it("as root: progress on stderr, the default image's tag on stdout (--json: {image})", async () => {
    const run = await prbox(home, ["image", "build", "--json"])
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ image: DEFAULT_IMAGE })
    expect(run.stderr).toMatch(/^importing prbox\/default:bookworm-/m)
  })

  it("--json refuses with a JSON error on stdout", async () => {
    const run = await asNobody(["image", "build", "--json"])
    expect(run.code, run.stderr).toBe(2)
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { tag: "DefaultImageUnavailable" } })
  })
})

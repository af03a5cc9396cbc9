import { execFile, execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { Launch } from "@prbox/client"
import { PRBOX_VERSION } from "@prbox/domain/Version"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hasStackTrace, tearDown } from "../../../apps/cli/test/support.ts"
import { makeHome, startDaemon } from "../../../apps/daemon/test/support.ts"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { assetReferences } from "../bundle.ts"
import { type InstalledPackage, installPackage } from "../install.ts"
import { LIB_DIR, NATIVE_DIR, PACKAGE_NAME, SSH_SERVER_FILE, VSCODE_DIR, vsixName } from "../Layout.ts"

/*
 * The packed tarball installed as a user would (npm install -g into an empty
 * prefix, offline), then run: its version, doctor, a real open → stop → rm
 * against the local engine with the test image, and the refusal of an old Node.
 */

const repo = join(import.meta.dirname, "..", "..", "..")
/** The system Node here is 20, below the minimum. */
const OLD_NODE = "/usr/bin/node"

/** Says on stderr when the full CLI's bundle (lib/prbox.js) loads: an answer without it came from the fast path. */
const FULL_CLI_PROBE = `--import=data:text/javascript,${encodeURIComponent(
  `import { registerHooks } from "node:module"; registerHooks({ load: (url, context, next) => { if (url.endsWith("/${LIB_DIR}/prbox.js")) process.stderr.write("full CLI loaded\\n"); return next(url, context) } })`
)}`

let prefix: string
let installed: InstalledPackage
let home: string
let remote: TestRemote

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** PATH with this Node (24) first: what `#!/usr/bin/env node` in the bins finds. */
const THIS_NODE_FIRST = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`

/** Runs a program with this Node first on PATH and the test's PRBOX_HOME. */
const run = (program: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      program,
      args,
      { env: { ...process.env, PATH: THIS_NODE_FIRST, PRBOX_HOME: home, ...env }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  })

const prbox = (...args: Array<string>) => run(installed.prbox, args)
const packageDir = () => join(prefix, "lib", "node_modules", PACKAGE_NAME)

const filesUnder = (root: string): Array<string> =>
  readdirSync(root, { recursive: true, encoding: "utf8" }).filter((path) => statSync(join(root, path)).isFile())

/** `new URL("./…", import.meta.url)` references in the workspace's sources (not tests). */
const sourceAssetReferences = (): Set<string> => {
  const roots = ["packages", "apps"].flatMap((group) =>
    readdirSync(join(repo, group)).map((name) => join(repo, group, name, "src"))
  )
  return new Set(
    roots
      .filter((root) => existsSync(root))
      .flatMap((root) =>
        filesUnder(root)
          .filter((path) => path.endsWith(".ts"))
          .map((path) => join(root, path))
      )
      .flatMap((file) => assetReferences(readFileSync(file, "utf8")))
      .map((reference) => reference.replace(/^\.\//, ""))
  )
}

beforeAll(async () => {
  prefix = realpathSync(mkdtempSync(join(tmpdir(), "prbox-prefix-")))
  installed = await installPackage(prefix)
  home = makeHome("package")
  remote = makeRemote(home)
}, 600_000)

afterAll(async () => {
  await tearDown(home)
  rmSync(prefix, { recursive: true, force: true })
})

describe("the installed package", () => {
  it("holds bundled JavaScript only, with no dependencies to fetch and no TypeScript", () => {
    const manifest = JSON.parse(readFileSync(join(packageDir(), "package.json"), "utf8")) as Record<string, unknown>
    expect(manifest.version).toBe(PRBOX_VERSION)
    expect(manifest.dependencies).toBeUndefined()
    const files = filesUnder(packageDir())
    expect(files.filter((path) => path.endsWith(".ts") || path.includes("node_modules"))).toEqual([])
    expect(files).toContain(join(LIB_DIR, "prbox.js"))
    expect(files).toContain(join(LIB_DIR, "prboxd.js"))
    // The SSH server ships built (never by esbuild at run time) and loads on Node's built-ins alone.
    const server = join(packageDir(), LIB_DIR, SSH_SERVER_FILE)
    const loaded = execFileSync(
      process.execPath,
      ["-e", `process.stdout.write(typeof require(${JSON.stringify(server)}).serve)`],
      {
        cwd: tmpdir(),
        encoding: "utf8"
      }
    )
    expect(loaded).toBe("function")
  })

  it('names its functions by their own identifiers, never one defineProperty(fn, "name") each', () => {
    const lib = join(packageDir(), LIB_DIR)
    const sources = filesUnder(lib)
      .filter((path) => path.endsWith(".js"))
      .map((path) => readFileSync(join(lib, path), "utf8"))
    // The bundler's keepNames helper, `(target, value) => defineProperty(target, "name", { value, configurable: true })`.
    const keepNames = /\(([\w$]+),([\w$]+)\)=>[\w$]+\(\1,"name",\{value:\2,configurable:!0\}\)/
    expect(sources.filter((source) => keepNames.test(source)).length).toBe(0)
    // A function of the client's, under its own name (@prbox/client Launch.ts).
    expect(sources.some((source) => source.includes("daemonArgs="))).toBe(true)
  })

  it("ships every file a bundled module reads next to itself (new URL(…, import.meta.url))", () => {
    const lib = join(packageDir(), LIB_DIR)
    const bundled = new Set(
      filesUnder(lib)
        .filter((path) => path.endsWith(".js"))
        .flatMap((path) => assetReferences(readFileSync(join(lib, path), "utf8")))
        .map((reference) => reference.replace(/^\.\//, ""))
    )
    // The sources' references all survive bundling; with the bundler's own (the daemon's entry, the addons)
    // each names a file the package holds.
    const sources = sourceAssetReferences()
    expect(sources.size).toBeGreaterThan(0)
    expect([...bundled]).toEqual(expect.arrayContaining([...sources]))
    for (const asset of bundled) expect(existsSync(join(lib, asset)), asset).toBe(true)
  })

  it("ships this platform's SQLite addon and the VS Code extension of the same version", () => {
    expect(existsSync(join(packageDir(), NATIVE_DIR, `better_sqlite3-${process.platform}-${process.arch}.node`))).toBe(
      true
    )
    const vsix = join(packageDir(), VSCODE_DIR, vsixName(PRBOX_VERSION))
    // A .vsix is a zip; python3 is part of the machine's set-up (scripts/setup).
    const read =
      "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read('extension/package.json').decode())"
    const manifest = JSON.parse(execFileSync("python3", ["-c", read, vsix], { encoding: "utf8" }))
    expect(manifest.version).toBe(PRBOX_VERSION)
  })

  it("prbox --version prints the one version", async () => {
    const version = await prbox("--version")
    expect(version.code, version.stderr).toBe(0)
    expect(version.stdout.trim()).toBe(`prbox v${PRBOX_VERSION}`)
  })

  it("prbox doctor --json reports its checks and the user service as one object", async () => {
    const doctor = await prbox("doctor", "--json")
    expect(doctor.code, doctor.stderr).toBe(0)
    const report = JSON.parse(doctor.stdout) as {
      checks: ReadonlyArray<{ name: string; detail: string }>
      service: { installed: boolean }
    }
    expect(report.checks.find((check) => check.name === "node")?.detail).toBe(`Node ${process.versions.node}`)
    expect(report.service.installed).toBe(false)
  })

  it("opens, stops and removes a sandbox with the bundled daemon it starts", async () => {
    const open = await prbox("open", remote.path, "--pr", "1")
    expect(open.code, open.stderr).toBe(0)
    expect(open.stderr).toContain("prboxd was not running; started it")
    expect(hasStackTrace(open.stderr)).toBe(false)
    const id = /sandbox ([a-z0-9]{12}) is running/.exec(open.stdout)?.[1] ?? ""
    expect(id, open.stdout).not.toBe("")
    // The daemon the CLI started is the package's bundle, not a source file.
    const pid = readFileSync(join(home, "run", "prboxd.lock"), "utf8").trim()
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
    expect(command).toContain(join(packageDir(), LIB_DIR, "prboxd.js"))

    // `ls` from the running daemon: answered by the bin's small start bundle, the full CLI never loaded.
    const listed = await run(installed.prbox, ["ls"], { NODE_OPTIONS: FULL_CLI_PROBE })
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(id)
    expect(listed.stderr).toBe("")

    const stop = await prbox("stop", id)
    expect(stop.code, stop.stderr).toBe(0)
    const stopped = JSON.parse((await prbox("status", id, "--json")).stdout) as { status: string }
    expect(stopped.status).toBe("stopped")

    const rm = await prbox("rm", id)
    expect(rm.code, rm.stderr).toBe(0)
    const left = JSON.parse((await prbox("ls", "-a", "--json")).stdout) as ReadonlyArray<unknown>
    expect(left).toEqual([])
    expect(
      execFileSync("docker", ["ps", "-aq", "--filter", `label=dev.prbox.home=${home}`], { encoding: "utf8" })
    ).toBe("")
  })

  it("bin/prboxd started directly runs with the daemon's Node flags on its command line, as the pid it started as", async () => {
    // As a user, a service unit or the VS Code extension starts it: the bin itself, its Node found on PATH.
    const own = makeHome("bin")
    try {
      const daemon = await startDaemon(own, { PATH: THIS_NODE_FIRST }, Launch.executable(installed.prboxd))
      try {
        // One process throughout (execve): the pid its parent holds is the daemon's, in its pidfile too.
        expect(readFileSync(join(own, "run", "prboxd.lock"), "utf8").trim()).toBe(String(daemon.pid))
        const command = readFileSync(`/proc/${daemon.pid}/cmdline`, "utf8").split("\0")
        // Each flag once (in the list's order).
        const flags = command.filter((arg) => Launch.DAEMON_NODE_FLAGS.includes(arg))
        expect(flags, command.join(" ")).toEqual(Launch.DAEMON_NODE_FLAGS)
      } finally {
        expect(await daemon.stop(), daemon.output()).toEqual({ code: 0, signal: null })
      }
    } finally {
      await tearDown(own)
    }
  })

  it.skipIf(!existsSync(OLD_NODE))("refuses the system Node 20 in one clear line", async () => {
    const oldVersion = execFileSync(OLD_NODE, ["--version"], { encoding: "utf8" }).trim().slice(1)
    // The bins as a user runs them with that Node first on PATH, and that Node run on them by hand.
    const oldPath = { PATH: `${dirname(OLD_NODE)}${delimiter}${process.env.PATH ?? ""}` }
    for (const [name, attempt] of [
      ["prbox", run(installed.prbox, ["--version"], oldPath)],
      ["prboxd", run(installed.prboxd, [], oldPath)],
      ["prbox", run(OLD_NODE, [installed.prbox, "ls"])]
    ] as const) {
      const refused = await attempt
      expect(refused.code).toBe(1)
      expect(refused.stdout).toBe("")
      expect(refused.stderr).toBe(`${name}: needs Node >= 22.19, this is Node ${oldVersion} (${OLD_NODE})\n`)
    }
  })
})

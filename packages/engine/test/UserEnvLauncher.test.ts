import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { LAUNCHER } from "../src/CodeServerLaunch.ts"
import { appliedEnv, mergePaths, PROBE_FLAGS, PROBE_SCRIPT, parseProbe, probeArgv } from "../src/UserEnvProbe.ts"

/**
 * The user-environment probe's two halves held to one answer: the engine's
 * (TypeScript: parseProbe, mergePaths, appliedEnv, for lifecycle commands)
 * and the launcher's (the same rules in JavaScript, run by Node before
 * code-server). Both run here for real, on this machine's /bin/sh and a
 * profile in a temporary HOME; the container tests run them in sandboxes.
 */
const dir = mkdtempSync(join(tmpdir(), "prbox-launcher-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// The entry the launcher loads in its own process: it writes what it was started with.
const entry = join(dir, "entry.cjs")
writeFileSync(
  entry,
  `require("fs").writeFileSync(process.argv[2], JSON.stringify({ env: process.env, argv: process.argv.slice(1), execArgv: process.execArgv }))`
)

const containerPath = "/opt/tool/bin:/usr/local/sbin:/usr/bin:/bin"
const root = process.getuid?.() === 0

const withProfile = (name: string, profile: string) => {
  const home = join(dir, name)
  spawnSync("mkdir", ["-p", home])
  writeFileSync(join(home, ".profile"), profile)
  return { HOME: home, SHELL: "/bin/sh", PATH: containerPath, KEEP: "container" }
}

/** The launcher, for real, the probe given `timeoutSeconds`: its stderr, and what the entry saw. */
const launch = (env: Record<string, string>, kept: ReadonlyArray<string>, timeoutSeconds = 10) => {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}.json`)
  const flag = PROBE_FLAGS.loginShell
  const run = spawnSync(
    process.execPath,
    ["-e", LAUNCHER, "--", flag, String(timeoutSeconds), kept.join(","), PROBE_SCRIPT, entry, out, "--flag"],
    { env, encoding: "utf8", timeout: (timeoutSeconds + 10) * 1000 }
  )
  const seen = JSON.parse(readFileSync(out, "utf8")) as {
    env: Record<string, string>
    argv: Array<string>
    execArgv: Array<string>
  }
  return { stderr: run.stderr, ...seen }
}

/** The engine's half on the same profile: the probe script run as the engine's exec runs it, then applied. */
const engineSide = (env: Record<string, string>, kept: ReadonlyArray<string>) => {
  const mark = "MARK-0123"
  const [program = "", ...args] = probeArgv("loginShell", mark, "cat /proc/self/environ")
  const run = spawnSync(program, args, { env, encoding: "utf8" })
  const parsed = parseProbe(run.stdout, mark, "\0")
  if (parsed === undefined) return assert.fail("the probe printed no marks")
  assert.strictEqual(parsed.containerPath, containerPath)
  return appliedEnv(parsed.env, parsed.containerPath, root, new Set(kept))
}

describe("the user-environment probe", () => {
  it("mergePaths is the CLI's: the container's entries back where they were, sbin only for root", () => {
    const rows: ReadonlyArray<readonly [string, string, boolean, string]> = [
      ["/usr/bin:/bin", "/opt/a:/usr/bin:/opt/b:/bin", false, "/opt/a:/usr/bin:/opt/b:/bin"],
      ["/usr/bin:/bin:/usr/games", "/opt/a:/usr/local/sbin:/usr/bin", false, "/opt/a:/usr/bin:/bin:/usr/games"],
      ["/usr/bin", "/usr/local/sbin:/usr/bin:/sbin", true, "/usr/local/sbin:/usr/bin:/sbin"],
      ["/x:/usr/bin", "/usr/bin:/x", false, "/x:/usr/bin"]
    ]
    for (const [shell, container, isRoot, merged] of rows)
      assert.strictEqual(mergePaths(shell, container, isRoot), merged)
  })

  it("parseProbe reads between the marks and the container's PATH line; noise around them is ignored", () => {
    const out = "PATH=/c\nwelcome!\nM1A=1\0B=x=y\0\0M1trailing"
    assert.deepStrictEqual(parseProbe(out, "M1", "\0"), { env: { A: "1", B: "x=y" }, containerPath: "/c" })
    assert.isUndefined(parseProbe("PATH=/c\nno marks", "M1", "\0"))
    assert.isUndefined(parseProbe("M1M1", "M1", "\0"))
  })

  it("the launcher and the engine apply the same environment: the profile's, PATH merged, kept variables kept", () => {
    const env = withProfile(
      "same",
      'export FROM_PROFILE=yes\nexport KEEP=profile\nPATH="/usr/bin:/bin:/usr/games"\nexport PATH\n'
    )
    const kept = ["KEEP", "HOME"]
    const engine = engineSide(env, kept)
    const seen = launch(env, kept)
    assert.strictEqual(engine.FROM_PROFILE, "yes")
    for (const [key, value] of Object.entries(engine)) assert.strictEqual(seen.env[key], value, key)
    assert.strictEqual(seen.env.PATH, mergePaths("/usr/bin:/bin:/usr/games", containerPath, root))
    assert.strictEqual(seen.env.KEEP, "container")
    assert.isUndefined(engine.KEEP)
    assert.isUndefined(engine.PWD)
    // code-server's entry is loaded in the launcher's own process, with its own argv and no `-e`.
    assert.deepStrictEqual(seen.argv.slice(0, 1), [entry])
    assert.deepStrictEqual(seen.argv.slice(2), ["--flag"])
    assert.deepStrictEqual(seen.execArgv, [])
    assert.strictEqual(seen.stderr, "")
  })

  it("a shell that gives nothing: code-server starts without it, one line on stderr", () => {
    const env = { ...withProfile("none", "export FROM_PROFILE=yes\n"), SHELL: join(dir, "no-such-shell") }
    const seen = launch(env, [])
    assert.isUndefined(seen.env.FROM_PROFILE)
    assert.match(seen.stderr, /userEnvProbe: the user's shell gave no environment/)
  })

  it("a profile that never ends: code-server starts after the probe's timeout (1 s here) without it", () => {
    const started = performance.now()
    const seen = launch(withProfile("slow", "export FROM_PROFILE=yes\nsleep 600\n"), [], 1)
    assert.isUndefined(seen.env.FROM_PROFILE)
    assert.match(seen.stderr, /did not finish within 1 s/)
    // The timeout given is the one kept: the launcher neither waits the default 10 s nor gives up at once.
    const took = performance.now() - started
    assert.isTrue(took >= 1000 && took < 9000, `${Math.round(took)} ms`)
  }, 30_000)
})

import { execFileSync, spawnSync } from "node:child_process"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { clientHome } from "@prbox/client"
import { invalidServiceSpec, renderSystemdUnit } from "@prbox/domain"
import { afterEach, describe, expect, it } from "vitest"
import { launcher } from "../src/Connect.ts"
import { daemonServiceSpec } from "../src/UserService.ts"
import { CLI_MAIN, hasStackTrace, makeHome, prbox, tearDown } from "./support.ts"

const made: Array<string> = []
const tempDir = (prefix: string) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `prbox-${prefix}-`)))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** This machine's state: does a systemd user manager answer? (Here PID 1 is not systemd: it does not.) */
const managerAnswers = spawnSync("systemctl", ["--user", "show-environment"], { stdio: "ignore" }).status === 0

/** The CLI as a user whose home is `userHome` (a fresh directory) and whose PRBOX_HOME is not created yet. */
const asUser = (userHome: string, args: ReadonlyArray<string>) =>
  prbox(join(userHome, "prbox-home"), args, { HOME: userHome, XDG_CONFIG_HOME: "" })

describe.skipIf(managerAnswers)("without a user service manager (systemctl --user fails here)", () => {
  it("daemon install fails with one clear line and exit 1, and writes nothing", async () => {
    const userHome = tempDir("nomanager")
    const run = await asUser(userHome, ["daemon", "install"])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(
      /^prbox: no systemd user manager answers \(`systemctl --user show-environment`: .+\); prboxd still starts on demand; nothing was written\n$/
    )
    expect(hasStackTrace(run.stderr)).toBe(false)
    // Not the unit, not ~/.config, not even PRBOX_HOME.
    expect(readdirSync(userHome)).toEqual([])
    const json = await asUser(userHome, ["daemon", "install", "--json"])
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout).error.tag).toBe("ServiceManagerUnavailable")
    expect(readdirSync(userHome)).toEqual([])
  })

  it("doctor --json reports the service as one object: not installed, manager unavailable, and where its file would be", async () => {
    const userHome = tempDir("doctor")
    const run = await asUser(userHome, ["doctor", "--json"])
    const report = JSON.parse(run.stdout)
    expect(Object.keys(report)).toEqual(["ok", "checks", "service", "engine"])
    expect(report.service).toEqual({
      manager: "systemd",
      available: false,
      file: join(userHome, ".config/systemd/user/prboxd.service"),
      installed: false,
      running: false,
      pid: null,
      detail: expect.stringMatching(/^no systemd user manager answers/)
    })
    expect(report.checks.find((check: { name: string }) => check.name === "service")).toMatchObject({ level: "ok" })
    const text = await asUser(userHome, ["doctor"])
    expect(text.stdout).toMatch(/^ok\s+service\s+no systemd user unit \(.*prboxd\.service\); prboxd starts on demand/m)
  })

  it("doctor says a unit file it finds is installed, and warns that no manager runs it", async () => {
    const userHome = tempDir("stale")
    const unit = join(userHome, ".config/systemd/user/prboxd.service")
    mkdirSync(join(userHome, ".config/systemd/user"), { recursive: true })
    writeFileSync(unit, "[Service]\n")
    const report = JSON.parse((await asUser(userHome, ["doctor", "--json"])).stdout)
    expect(report.service).toMatchObject({ installed: true, running: false, file: unit })
    expect(report.checks.find((check: { name: string }) => check.name === "service")).toMatchObject({ level: "warn" })
  })

  it("daemon uninstall: nothing installed is exit 0; a unit it cannot stop is left in place, exit 1", async () => {
    const userHome = tempDir("uninstall")
    const none = await asUser(userHome, ["daemon", "uninstall"])
    expect(none.code).toBe(0)
    expect(none.stdout).toMatch(/^prboxd is not installed as a user service/)
    const unit = join(userHome, ".config/systemd/user/prboxd.service")
    mkdirSync(join(userHome, ".config/systemd/user"), { recursive: true })
    writeFileSync(unit, "[Service]\n")
    const left = await asUser(userHome, ["daemon", "uninstall"])
    expect(left.code).toBe(1)
    expect(left.stderr).toMatch(/cannot stop and disable prboxd\.service; .*prboxd\.service was left in place\n$/)
    expect(readdirSync(join(userHome, ".config/systemd/user"))).toEqual(["prboxd.service"])
  })
})

/**
 * `systemd-analyze verify` in user mode on the unit alone: the unit's own
 * directory first on the search path, a private runtime and config
 * directory (no running manager is needed, no real user unit is read), and
 * no man page lookups. It checks the syntax, the specifiers and that
 * ExecStart's program exists and is executable; a warning it prints while
 * exiting 0 ("ignoring ...") counts as a failure too.
 */
const verify = (unitText: string) => {
  const dir = tempDir("verify")
  mkdirSync(join(dir, "units"))
  mkdirSync(join(dir, "run"), { mode: 0o700 })
  const file = join(dir, "units", "prboxd.service")
  writeFileSync(file, unitText)
  const result = spawnSync("systemd-analyze", ["verify", "--man=no", "--user", file], {
    env: { PATH: process.env.PATH, XDG_RUNTIME_DIR: join(dir, "run"), XDG_CONFIG_HOME: join(dir, "config"), HOME: dir },
    encoding: "utf8"
  })
  return { code: result.status, output: `${result.stdout}${result.stderr}` }
}

describe("the systemd unit, checked by systemd-analyze verify", () => {
  it("the unit for the CLI's own launcher passes", () => {
    const home = clientHome(tempDir("home"))
    const result = verify(renderSystemdUnit(daemonServiceSpec(launcher, home, process.env)))
    expect(result).toEqual({ code: 0, output: "" })
  })

  it("program, arguments and PRBOX_HOME under paths with spaces, quotes, %, $ and a backslash pass", () => {
    const root = tempDir("weird")
    // systemd refuses quotes and backslashes in the program's path (invalidServiceSpec says so), not in the rest.
    const programDir = join(root, "a dir 100%h $HOME")
    const stateDir = join(root, `s "q" 'o' 100%h $HOME \\x`)
    mkdirSync(programDir)
    symlinkSync(process.execPath, join(programDir, "node"))
    const home = clientHome(join(stateDir, "state"))
    const spec = daemonServiceSpec(
      { command: join(programDir, "node"), args: [join(stateDir, "prboxd.mjs")] },
      home,
      {}
    )
    expect(invalidServiceSpec(spec, "systemd")).toBeUndefined()
    expect(verify(renderSystemdUnit(spec))).toEqual({ code: 0, output: "" })
  })

  it("systemd itself refuses a quote in the program's path, as invalidServiceSpec does", () => {
    const programDir = join(tempDir("quoted"), `it's`)
    mkdirSync(programDir)
    symlinkSync(process.execPath, join(programDir, "node"))
    const spec = daemonServiceSpec({ command: join(programDir, "node"), args: [] }, clientHome(programDir), {})
    expect(invalidServiceSpec(spec, "systemd")).toMatch(/^systemd cannot run a program whose path has a quote/)
    expect(verify(renderSystemdUnit(spec)).output).toMatch(/Executable name contains special characters/)
  })

  it("a broken unit fails it (the check can fail): an unescaped %, an unknown Restart= value, a program that is not there", () => {
    const home = clientHome(tempDir("home"))
    const unit = renderSystemdUnit(daemonServiceSpec(launcher, home, {}))
    const binDir = tempDir("bin")
    const program = join(binDir, "node")
    writeFileSync(program, "#!/bin/sh\n")
    chmodSync(program, 0o755)
    expect(verify(unit.replace(/^ExecStart=.*$/m, `ExecStart="${program}" "%z"`)).code).not.toBe(0)
    expect(verify(unit.replace("Restart=on-failure", "Restart=sometimes")).output).toMatch(/restart specifier/)
    expect(verify(unit.replace(/^ExecStart="[^"]+"/m, `ExecStart="${binDir}/missing"`)).output).toMatch(
      /is not executable/
    )
  })
})

it("systemd-analyze is here (the verify tests above need it)", () => {
  expect(execFileSync("systemd-analyze", ["--version"], { encoding: "utf8" })).toMatch(/^systemd \d+/)
})

/**
 * A fake `systemctl` (no user manager can run here): it logs each call,
 * answers `show-environment` and `show` like systemd, and for `start` runs
 * the daemon the way the CLI starts it on demand; `disable --now` stops it.
 */
const FAKE_SYSTEMCTL = `#!/bin/bash
echo "$*" >> "$FAKE_DIR/calls"
shift
pid() { cat "$PRBOX_HOME/run/prboxd.lock" 2>/dev/null; }
case "$1" in
  show-environment) echo "HOME=$FAKE_DIR/home"; echo "LANG=C" ;;
  show)
    if [ -f "$FAKE_DIR/active" ]; then echo "ActiveState=active"; echo "SubState=running"; echo "MainPID=$(pid)"
    else echo "ActiveState=inactive"; echo "SubState=dead"; echo "MainPID=0"; fi
    echo "UnitFileState=enabled" ;;
  start|restart) "$FAKE_NODE" "$FAKE_CLI" daemon start >/dev/null && touch "$FAKE_DIR/active" ;;
  disable) p=$(pid); rm -f "$FAKE_DIR/active"; [ -n "$p" ] && kill "$p" && while kill -0 "$p" 2>/dev/null; do sleep 0.1; done ;;
esac
exit 0
`

describe("with a fake systemctl (no user service manager can run here)", () => {
  it("install hands an on-demand daemon over to the manager, doctor sees it running, uninstall undoes it", async () => {
    const fake = tempDir("fakesystemd")
    const home = makeHome("service")
    mkdirSync(join(fake, "bin"))
    mkdirSync(join(fake, "home"))
    writeFileSync(join(fake, "bin", "systemctl"), FAKE_SYSTEMCTL, { mode: 0o755 })
    const env = {
      PATH: `${join(fake, "bin")}:${process.env.PATH}`,
      HOME: join(fake, "home"),
      FAKE_DIR: fake,
      FAKE_NODE: process.execPath,
      FAKE_CLI: CLI_MAIN
    }
    const calls = () => readFileSync(join(fake, "calls"), "utf8").trim().split("\n")
    try {
      const onDemand = await prbox(home, ["daemon", "start", "--json"], env)
      const onDemandPid = JSON.parse(onDemand.stdout).pid as number
      const installed = await prbox(home, ["daemon", "install", "--json"], env)
      expect(installed.code, installed.stderr).toBe(0)
      expect(installed.stderr).toContain(`stopping prboxd (pid ${onDemandPid}), started on demand`)
      const unit = join(fake, "home/.config/systemd/user/prboxd.service")
      const result = JSON.parse(installed.stdout)
      expect(result).toMatchObject({ installed: true, file: unit, changed: true, manager: "systemd" })
      expect(result.pid).not.toBe(onDemandPid)
      expect(calls()).toEqual([
        "--user show-environment",
        "--user show prboxd.service --property=LoadState,ActiveState,SubState,MainPID,UnitFileState",
        "--user show-environment",
        "--user daemon-reload",
        "--user enable prboxd.service",
        "--user start prboxd.service"
      ])
      const expected = renderSystemdUnit(daemonServiceSpec(launcher, clientHome(home), { ...process.env, ...env }))
      expect(readFileSync(unit, "utf8")).toBe(expected)

      const doctor = JSON.parse((await prbox(home, ["doctor", "--json"], env)).stdout)
      expect(doctor.service).toMatchObject({ installed: true, running: true, pid: result.pid, file: unit })
      expect(doctor.checks.find((check: { name: string }) => check.name === "service").detail).toBe(
        `systemd user unit ${unit} is installed and running (pid ${result.pid}): active (running), enabled`
      )

      // Installed again, unchanged and running: nothing is restarted.
      writeFileSync(join(fake, "calls"), "")
      const again = await prbox(home, ["daemon", "install", "--json"], env)
      expect(JSON.parse(again.stdout)).toMatchObject({ changed: false, pid: result.pid })
      expect(calls().filter((call) => /start|stop/.test(call))).toEqual([])

      writeFileSync(join(fake, "calls"), "")
      const removed = await prbox(home, ["daemon", "uninstall"], env)
      expect(removed.code, removed.stderr).toBe(0)
      expect(removed.stdout).toBe(`stopped prboxd and removed ${unit}; commands start prboxd on demand again\n`)
      expect(existsSync(unit)).toBe(false)
      expect(calls()).toEqual([
        "--user show-environment",
        "--user disable --now prboxd.service",
        "--user daemon-reload",
        "--user reset-failed prboxd.service"
      ])
      // And the CLI starts its daemon on demand again.
      const status = await prbox(home, ["daemon", "start", "--json"], env)
      expect(JSON.parse(status.stdout)).toMatchObject({ started: true })
    } finally {
      await tearDown(home)
    }
    // Six whole CLI runs and two daemon starts: minutes under CI's load.
  }, 240_000)
})

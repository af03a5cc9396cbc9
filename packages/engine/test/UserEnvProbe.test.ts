import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { FIRST_FAILED } from "../src/RunFirst.ts"
import { PROBE_TIMED_OUT, parseProbe, probeArgv, probeBesideArgv } from "../src/UserEnvProbe.ts"
import { bounded, openRunning, rowOf, withEngine } from "./harness.ts"
import { devUserTag, inContainer } from "./user-image.ts"

/**
 * `userEnvProbe` on a real engine: dev's ~/.profile sets FROM_PROFILE; the
 * image's ENV PATH has /opt/tool/bin, which Debian's /etc/profile drops
 * from a login shell's PATH and the probe merges back (the CLI's
 * mergePaths). What lifecycle commands and code-server itself see.
 */
const report = [
  `echo "\${FROM_PROFILE:-unset}" > /tmp/from-profile`,
  `echo "$PATH" > /tmp/path`,
  "mytool > /tmp/tool 2>&1",
  `echo "$KEEP" > /tmp/keep`
].join("; ")

/**
 * code-server's own environment, as its server (the process it forks, whose
 * children are the terminals and extension hosts) was started with; read as
 * root. (`entr[y]`: the pattern must not match this shell's own command line.)
 */
const codeServerEnv = (containerId: string, name: string): string =>
  inContainer(
    containerId,
    `pid=$(pgrep -n -f 'out/node/entr[y]$'); tr '\\0' '\\n' < /proc/$pid/environ | sed -n 's/^${name}=//p'`
  )

/** Whether process `pid` is gone (or a zombie) within 2 s: a kill is delivered, not awaited. */
const endsSoon = (pid: number): boolean => {
  for (let tries = 0; tries < 100; tries++) {
    const stat = spawnSync("cat", [`/proc/${pid}/stat`], { encoding: "utf8" }).stdout
    if (stat === "" || stat.replace(/^.*\) /s, "").startsWith("Z")) return true
    spawnSync("sleep", ["0.02"])
  }
  return false
}

describe("userEnvProbe", () => {
  it("a command run first in the probe's exec gets its arguments whole, runs from /, and its failure is a line on stderr; the probe's answer is untouched", () => {
    const folder = mkdtempSync(join(tmpdir(), "prbox-probe-first-"))
    try {
      const out = join(folder, "args")
      const hostile = ["a b", `c"d`, "$HOME", "e'f", "g\\h", "$(touch pwned)", "`touch pwned`", ""]
      const record = ["/bin/sh", "-c", `pwd > "$0.pwd"; printf '%s|' "$@" > "$0"; exit "$FIRST_EXIT"`, out, ...hostile]
      for (const [exit, failed] of [
        ["0", false],
        ["3", true]
      ] as const) {
        const argv = probeArgv("loginShell", "MARK-1", "printenv", record)
        const run = spawnSync(argv[0] ?? "", argv.slice(1), {
          cwd: folder,
          encoding: "utf8",
          env: { PATH: process.env.PATH ?? "", SHELL: "/bin/sh", FIRST_EXIT: exit, PROBED: "yes" }
        })
        assert.strictEqual(readFileSync(out, "utf8"), `${hostile.join("|")}|`)
        assert.strictEqual(readFileSync(`${out}.pwd`, "utf8").trim(), "/")
        assert.isFalse(existsSync(join(folder, "pwned")) || existsSync("/pwned"))
        assert.strictEqual(run.stderr.includes(FIRST_FAILED), failed)
        const parsed = parseProbe(run.stdout, "MARK-1", "\n")
        assert.strictEqual(parsed?.env.PROBED, "yes")
        assert.strictEqual(parsed?.containerPath, process.env.PATH)
      }
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })

  it("a command run beside the probe gets the exec's stdin and its arguments whole, its output on stderr and its status the exec's; a shell that hangs is stopped at the bound", () => {
    const folder = mkdtempSync(join(tmpdir(), "prbox-probe-beside-"))
    try {
      // The shell the probe runs: the environment, or (HANG) a child left to outlive it (8 s, its pid in `child`) and a wait (4 s).
      const shell = join(folder, "shell")
      const child = join(folder, "child")
      const hang = `if [ -n "$HANG" ]; then sleep 8 & echo $! > ${child}; sleep 4; fi`
      writeFileSync(shell, `#!/bin/sh\n${hang}\nexec /bin/sh "$@"\n`, { mode: 0o755 })
      const hostile = ["a b", `c"d`, "$HOME", "$(touch pwned)", ""]
      const beside = {
        script: `out=$1; shift; cat > "$out.in"; printf '%s|' "$@" > "$out"; echo said; exit "$BESIDE_EXIT"`,
        args: [join(folder, "args"), ...hostile]
      }
      const run = (exit: string, hang: boolean) => {
        const argv = probeBesideArgv("loginShell", "MARK-2", "printenv", 2, beside, ["/bin/sh", "-c", "exit 1"])
        const started = Date.now()
        const ran = spawnSync(argv[0] ?? "", argv.slice(1), {
          cwd: folder,
          encoding: "utf8",
          input: "the bundle",
          env: {
            PATH: process.env.PATH ?? "",
            SHELL: shell,
            BESIDE_EXIT: exit,
            PROBED: "yes",
            ...(hang ? { HANG: "1" } : {})
          },
          timeout: 20_000
        })
        return { ...ran, ms: Date.now() - started }
      }
      for (const [exit, hang] of [
        ["0", false],
        ["3", false],
        ["0", true]
      ] as const) {
        const ran = run(exit, hang)
        assert.strictEqual(ran.status, Number(exit))
        assert.strictEqual(readFileSync(join(folder, "args"), "utf8"), `${hostile.join("|")}|`)
        assert.strictEqual(readFileSync(join(folder, "args.in"), "utf8"), "the bundle")
        assert.isFalse(existsSync(join(folder, "pwned")))
        assert.include(ran.stderr, "said")
        assert.include(ran.stderr, FIRST_FAILED)
        assert.notInclude(ran.stdout, "said")
        const parsed = parseProbe(ran.stdout, "MARK-2", "\n")
        if (hang) {
          // Stopped at its bound (2 s), and the child it left (8 s) does not hold the exec's output.
          assert.isBelow(ran.ms, 7_000)
          assert.include(ran.stderr, PROBE_TIMED_OUT)
          assert.isUndefined(parsed)
          // Killed with the shell, not left running.
          assert.isTrue(endsSoon(Number(readFileSync(child, "utf8"))))
        } else {
          assert.notInclude(ran.stderr, PROBE_TIMED_OUT)
          assert.strictEqual(parsed?.env.PROBED, "yes")
        }
      }
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })

  it.live(
    "the default (loginInteractiveShell): a lifecycle command and code-server see the login profile's variables",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          const image = yield* devUserTag
          pushPullRequest(remote.path, 1, {
            ".devcontainer/devcontainer.json": JSON.stringify({
              image,
              // remoteEnv wins over what the profile sets.
              remoteEnv: { KEEP: "from-remoteEnv", FROM_REMOTE: "yes" },
              postCreateCommand: report
            })
          })
          const row = yield* openRunning(remote.path, 1)
          assert.isNull(row.setupError)
          const id = row.containerId ?? assert.fail("no container")
          assert.strictEqual(inContainer(id, "cat /tmp/from-profile"), "profile-of-dev")
          const path = inContainer(id, "cat /tmp/path").split(":")
          assert.include(path, "/opt/tool/bin", "the image's PATH entry was lost")
          assert.include(path, "/usr/games", "the login profile's PATH was not used")
          assert.strictEqual(inContainer(id, "cat /tmp/tool"), "tool-ran")
          assert.strictEqual(inContainer(id, "cat /tmp/keep"), "from-remoteEnv")
          assert.strictEqual(codeServerEnv(id, "FROM_PROFILE"), "profile-of-dev")
          assert.strictEqual(codeServerEnv(id, "FROM_REMOTE"), "yes")
          assert.include(codeServerEnv(id, "PATH").split(":"), "/usr/games")
        })
      )
  )

  it.live("none: neither sees them", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const image = yield* devUserTag
        pushPullRequest(remote.path, 2, {
          ".devcontainer/devcontainer.json": JSON.stringify({ image, userEnvProbe: "none", postCreateCommand: report })
        })
        const row = yield* openRunning(remote.path, 2)
        const id = row.containerId ?? assert.fail("no container")
        assert.strictEqual(inContainer(id, "cat /tmp/from-profile"), "unset")
        assert.notInclude(inContainer(id, "cat /tmp/path").split(":"), "/usr/games")
        assert.strictEqual(codeServerEnv(id, "FROM_PROFILE"), "")
      })
    )
  )

  it.live(
    "a profile that never finishes is a warning after the probe's timeout (1 s here), not a failure: the sandbox opens and its commands run",
    () =>
      withEngine({ config: { userEnvProbeTimeoutSeconds: 1 } }, ({ remote }) =>
        Effect.gen(function* () {
          const image = yield* devUserTag
          pushPullRequest(remote.path, 3, {
            ".devcontainer/devcontainer.json": JSON.stringify({
              build: { dockerfile: "Dockerfile" },
              postCreateCommand: report
            }),
            ".devcontainer/Dockerfile": `FROM ${image}\nRUN echo 'sleep 600' >> /home/dev/.profile\n`
          })
          const row = yield* openRunning(remote.path, 3)
          assert.isNull(row.setupError)
          const id = row.containerId ?? assert.fail("no container")
          assert.strictEqual(inContainer(id, "cat /tmp/from-profile"), "unset")
          const events = yield* SandboxService.use((sandboxes) => sandboxes.logs(row.id, { limit: 1000 }))
          const at = (pattern: RegExp) =>
            events.find((event) => event._tag === "Progress" && pattern.test(event.line))?.at ??
            assert.fail(`no log line ${pattern}: ${events.map((event) => JSON.stringify(event)).join("\n")}`)
          const gaveUp = at(/warning: userEnvProbe: the user's shell did not finish within 1 s/)
          // The probe starts with the health wait: it gives up about 1 s later, not after the default 10 s.
          const waited = gaveUp - at(/waiting for code-server to answer/)
          assert.isTrue(waited < 6000, `the probe gave up ${waited} ms after the container started`)
        })
      ),
    120_000
  )

  it.live(
    "the probe for lifecycle commands runs while code-server starts: it is under way while the ready hook, after health, is held",
    () => {
      // The ready hook (run once code-server answers) waits on a latch of the test's: the probe
      // that used to follow it must be done meanwhile, yet the commands still get what it found.
      const latch = mkdtempSync(join(tmpdir(), "prbox-probe-latch-"))
      const [started, go] = [join(latch, "hook-started"), join(latch, "go")]
      const onSandboxReady = [
        "sh",
        "-c",
        `touch ${started}; while [ ! -e ${go} ] && [ -d ${latch} ]; do sleep 0.05; done`
      ]
      return withEngine({ config: { hooks: { onSandboxReady } } }, ({ remote }) =>
        Effect.gen(function* () {
          const image = yield* devUserTag
          pushPullRequest(remote.path, 4, {
            ".devcontainer/devcontainer.json": JSON.stringify({
              build: { dockerfile: "Dockerfile" },
              postCreateCommand: report
            }),
            // Each run of dev's login profile (code-server's probe, then the commands') leaves a line.
            ".devcontainer/Dockerfile": `FROM ${image}\nRUN echo 'echo probed >> /tmp/probes' >> /home/dev/.profile\n`
          })
          const opened = yield* SandboxService.use((sandboxes) => sandboxes.open({ input: remote.path, pr: 4 }))
          const probes = (containerId: string | null) =>
            containerId === null ? 0 : Number(inContainer(containerId, "cat /tmp/probes 2>/dev/null | wc -l"))
          const held = yield* rowOf(opened.id).pipe(
            Effect.flatMap((row) =>
              existsSync(started) && probes(row.containerId) >= 2 ? Effect.succeed(row) : Effect.fail("not yet")
            ),
            Effect.retry(Schedule.spaced("100 millis")),
            bounded("the lifecycle commands' probe while the ready hook is held", 60),
            Effect.orDie
          )
          assert.strictEqual(held.status, "starting")
          writeFileSync(go, "")
          yield* SandboxService.use((sandboxes) => sandboxes.awaitIdle(opened.id))
          const row = yield* rowOf(opened.id)
          assert.strictEqual(row.status, "running", row.error ?? "")
          assert.isNull(row.setupError)
          const id = row.containerId ?? assert.fail("no container")
          assert.strictEqual(inContainer(id, "cat /tmp/from-profile"), "profile-of-dev")
          // Once for code-server, once for the commands: the early probe is not an extra one.
          assert.strictEqual(probes(id), 2)
        })
      ).pipe(Effect.ensuring(Effect.sync(() => rmSync(latch, { recursive: true, force: true }))))
    },
    120_000
  )
})

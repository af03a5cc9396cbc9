import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { splitAtMark } from "@prbox/domain"
import { NO_STEP, parseProbe, probeBesideArgv, stepFrame } from "../src/UserEnvProbe.ts"

const MARK = "MARK-3"
const STEP_MARK = "STEP-MARK-3"

/**
 * The probe's exec with a step after the command beside it, run by this
 * host's /bin/sh as the exec would run it: the test answers on its stdin as
 * the engine does (create/ProbeBeside.ts), from what the probe printed.
 */
const runWithStep = (
  folder: string,
  beside: { readonly script: string; readonly args: ReadonlyArray<string> },
  answer: (probeOutput: string) => string,
  env: Readonly<Record<string, string>>
) =>
  new Promise<{
    state: string | undefined
    status: number | null
    probe: string
    besideErr: string
    status1: string | undefined
    stepOut: string
    stepErr: string
  }>((resolve, reject) => {
    const argv = probeBesideArgv("loginShell", MARK, "printenv", 5, beside, undefined, STEP_MARK)
    const child = spawn(argv[0] ?? "", argv.slice(1), { cwd: folder, env: { PATH: process.env.PATH ?? "", ...env } })
    const stdout = splitAtMark(STEP_MARK, { before: 65536, after: 65536 }, (state) => {
      child.stdin.write(state === "0" ? answer(stdout.before().text) : NO_STEP)
      child.stdin.end("the bundle")
    })
    const stderr = splitAtMark(STEP_MARK, { before: 65536, after: 65536 })
    child.stdout.on("data", (chunk: Buffer) => stdout.add(chunk))
    child.stderr.on("data", (chunk: Buffer) => stderr.add(chunk))
    child.on("error", reject)
    child.on("close", (status) => {
      stdout.end()
      stderr.end()
      resolve({
        state: stdout.word(),
        status,
        probe: stdout.before().text,
        besideErr: stderr.before().text,
        status1: stderr.word(),
        stepOut: stdout.after().text,
        stepErr: stderr.after().text
      })
    })
  })

/** `use` with a new folder, removed after it. */
const inFolder = async (use: (folder: string) => Promise<void>) => {
  const folder = mkdtempSync(join(tmpdir(), "prbox-probe-step-"))
  try {
    await use(folder)
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

describe("a step in the probe's exec", () => {
  it("runs after the command beside the probe, with the probed environment and the values over it whole; its output and status are the exec's after the marks", async () =>
    inFolder(async (folder) => {
      const hostile = ["a b", `c"d`, "$HOME", "e'f", "$(touch pwned)", "`touch pwned`", "multi\nline", ""]
      const beside = {
        script: `out=$1; cat > "$out.in"; echo checked out; exit "$BESIDE_EXIT"`,
        args: [join(folder, "checkout")]
      }
      // The step: whether the checkout's file was there first, its environment, its arguments.
      const step = [
        "/bin/sh",
        "-c",
        `test -e "$0.in" && echo after-checkout; printf '%s|' "$@"; echo; echo "probed=$PROBED over=$OVER" >&2; exit 4`,
        join(folder, "checkout"),
        ...hostile
      ]
      const frameFrom = (probeOutput: string) => {
        const parsed = parseProbe(probeOutput, MARK, "\n")
        assert.strictEqual(parsed?.env.PROBED, "from the shell")
        return stepFrame(step, { ...(parsed?.env ?? {}), OVER: hostile.join("/") }) ?? assert.fail("no frame")
      }
      const ran = await runWithStep(folder, beside, frameFrom, { PROBED: "from the shell", BESIDE_EXIT: "0" })
      assert.strictEqual(ran.state, "0")
      assert.strictEqual(readFileSync(join(folder, "checkout.in"), "utf8"), "the bundle")
      assert.include(ran.besideErr, "checked out")
      assert.strictEqual(ran.status1, "0")
      assert.strictEqual(ran.stepOut, `after-checkout\n${hostile.join("|")}|\n`)
      assert.strictEqual(ran.stepErr, `probed=from the shell over=${hostile.join("/")}\n`)
      assert.strictEqual(ran.status, 4)
      assert.notInclude(ran.probe, "after-checkout")
      assert.isFalse(existsSync(join(folder, "pwned")))
    }))

  it("never runs when the command beside the probe failed: the exec's status is that command's", async () =>
    inFolder(async (folder) => {
      const beside = { script: `cat > /dev/null; echo no such commit >&2; exit 128`, args: [] }
      const step = ["/bin/sh", "-c", `touch "$0"`, join(folder, "step-ran")]
      const ran = await runWithStep(folder, beside, () => stepFrame(step, {}) ?? assert.fail("no frame"), {})
      assert.strictEqual(ran.status, 128)
      assert.strictEqual(ran.status1, "128")
      assert.include(ran.besideErr, "no such commit")
      assert.isFalse(existsSync(join(folder, "step-ran")))
    }))

  it("with no step sent, the command beside still gets its stdin and the exec its status", async () =>
    inFolder(async (folder) => {
      const beside = { script: `cat > "$1"`, args: [join(folder, "stdin")] }
      const ran = await runWithStep(folder, beside, () => NO_STEP, {})
      assert.strictEqual(ran.status, 0)
      assert.strictEqual(ran.status1, "0")
      assert.strictEqual(readFileSync(join(folder, "stdin"), "utf8"), "the bundle")
      assert.strictEqual(ran.stepOut, "")
    }))

  it("a container with no `env` says so: the step is never sent there", async () =>
    inFolder(async (folder) => {
      // What the script and the probe need, and no `env`.
      mkdirSync(join(folder, "bin"))
      for (const tool of ["sh", "cat", "mktemp", "rm", "sleep", "printenv", "id", "head", "cut", "grep", "getent"]) {
        const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim()
        if (found !== "") symlinkSync(found, join(folder, "bin", tool))
      }
      const beside = { script: `cat > /dev/null`, args: [] }
      const ran = await runWithStep(folder, beside, () => assert.fail("no step is asked for"), {
        PATH: join(folder, "bin"),
        SHELL: "/bin/sh"
      })
      assert.strictEqual(ran.state, "2")
      assert.strictEqual(ran.status, 0)
    }))

  it.each([
    ["a command that env would take for an option", ["-i", "x"], {}],
    ["a command that env would take for a variable", ["A=B"], {}],
    ["a variable env would take for an option", ["/bin/true"], { "-u": "x" }],
    ["a name an exec's environment refuses", ["/bin/true"], { "A=B": "x" }],
    ["a value with a NUL", ["/bin/true"], { A: "x\0y" }],
    ["an argument with a NUL", ["/bin/echo", "x\0y"], {}],
    ["no command", [], {}]
  ] as const)("is not sent: %s", (_name, argv, env) => {
    assert.isUndefined(stepFrame(argv, env))
  })

  it("a frame counts its lines, values with newlines included", () => {
    assert.strictEqual(stepFrame(["/bin/echo", "a\nb"], { X: "1\n2" }), `3\nexec env 'X=1\n2' '/bin/echo' 'a\nb'\n`)
  })
})

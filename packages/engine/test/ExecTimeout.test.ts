import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { NodeDocker } from "@prbox/docker"
import { Effect, Fiber, Layer, Schedule } from "effect"
import { FetchHttpClient } from "effect/http"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { countSleepsArgv } from "../../../scripts/testing/processes.ts"
import { runProbeBeside } from "../src/create/ProbeBeside.ts"
import { CWD_NOT_FOLDER } from "../src/exec/CommandPlace.ts"
import { RESOLVE_MISSING, RESOLVE_OUTSIDE } from "../src/exec/WorkspaceResolve.ts"
import { ContainerRuntime } from "../src/index.ts"
import { NodeContainerRuntime } from "../src/node/index.ts"
import { probeBesideArgv } from "../src/UserEnvProbe.ts"
import { healthzGitImage } from "./git-image.ts"
import { bounded, healthzTag } from "./harness.ts"

const runtimeLayer = NodeContainerRuntime.layer.pipe(
  Layer.provide(NodeDocker.layer()),
  Layer.provide(FetchHttpClient.layer)
)
const USER = "1000:1000"
const WS = "/tmp/ws"

/** A running container (busybox by default) with a workspace: a folder, a file, and a symlink pointing out. */
const containerOf = (image: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const containerId = yield* runtime.provision({
        name: `prbox-test-exec-${randomBytes(4).toString("hex")}`,
        image,
        args: [],
        env: {},
        labels: { [TEST_RUN_LABEL]: inject("testRunId") },
        binds: [],
        user: USER,
        workingDir: "/tmp",
        port: 8080,
        capDrop: []
      })
      yield* runtime.start(containerId)
      yield* run(containerId, ["sh", "-c", `mkdir -p ${WS}/sub && touch ${WS}/file && ln -s /etc ${WS}/out`])
      return containerId
    }),
    (containerId) => Effect.flatMap(ContainerRuntime, (runtime) => runtime.destroy(containerId)).pipe(Effect.orDie)
  )
const container = containerOf(healthzTag)

const run = (
  containerId: string,
  argv: ReadonlyArray<string>,
  options: { timeoutMs?: number; stdin?: Uint8Array } = {}
) =>
  Effect.flatMap(ContainerRuntime, (runtime) =>
    runtime.exec(containerId, argv, {
      user: USER,
      cwd: "/tmp",
      timeoutMs: options.timeoutMs ?? 20_000,
      maxOutputBytes: 1024,
      ...(options.stdin === undefined ? {} : { stdin: options.stdin })
    })
  )

/** How many processes' command lines hold `sleep <marker>` (an argument no other process has). */
const processesWith = (containerId: string, marker: string) =>
  run(containerId, countSleepsArgv(marker)).pipe(Effect.map((outcome) => Number(outcome.stdout.trim())))

describe("supervised exec (real Docker)", () => {
  it.live("keeps the head and the tail of 5 MB of output, and strips the supervisor's pid line", () =>
    Effect.gen(function* () {
      const containerId = yield* container
      const outcome = yield* run(containerId, [
        "sh",
        "-c",
        "echo FIRST; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo LAST; echo ERR >&2"
      ])
      assert.strictEqual(outcome.exitCode, 0)
      assert.isTrue(outcome.truncated)
      assert.isFalse(outcome.timedOut)
      assert.isTrue(outcome.stdout.startsWith("FIRST\nxxx"), outcome.stdout.slice(0, 40))
      assert.isTrue(outcome.stdout.endsWith("xxx\nLAST\n"))
      assert.match(outcome.stdout, /\n\[\.\.\. \d+ bytes left out \.\.\.\]\n/)
      assert.isBelow(outcome.stdout.length, 1100)
      assert.strictEqual(outcome.stderr, "ERR\n")
    }).pipe(Effect.scoped, Effect.provide(runtimeLayer), bounded("the exec did not end", 60))
  )

  // busybox's sh and Debian's dash: their `kill` builtins differ (dash refuses `kill -- -<pid>`).
  it.live.each([
    { shell: "busybox sh", image: () => healthzTag },
    { shell: "dash", image: healthzGitImage }
  ])("kills the command and its children at the deadline, inside the container ($shell)", ({ image }) =>
    Effect.gen(function* () {
      const containerId = yield* containerOf(image())
      const outcome = yield* run(containerId, ["sh", "-c", "echo started; sleep 1000.5 & sleep 1000.6"], {
        timeoutMs: 1000
      })
      assert.isTrue(outcome.timedOut)
      assert.isNull(outcome.exitCode)
      assert.strictEqual(outcome.stdout, "started\n")
      assert.strictEqual(yield* processesWith(containerId, "1000.5"), 0)
      assert.strictEqual(yield* processesWith(containerId, "1000.6"), 0)
    }).pipe(Effect.scoped, Effect.provide(runtimeLayer), bounded("the exec did not end", 60))
  )

  it.live("kills the command when its caller goes away", () =>
    Effect.gen(function* () {
      const containerId = yield* container
      const fiber = yield* run(containerId, ["sleep", "1000.123"], { timeoutMs: 600_000 }).pipe(Effect.forkChild)
      // The latch: the command is running in the container.
      yield* processesWith(containerId, "1000.123").pipe(
        Effect.repeat({ schedule: Schedule.spaced(50), until: (count) => count === 1 })
      )
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* processesWith(containerId, "1000.123"), 0)
    }).pipe(Effect.scoped, Effect.provide(runtimeLayer), bounded("the exec was not killed", 60))
  )

  it.live("writes stdin and closes it", () =>
    Effect.gen(function* () {
      const containerId = yield* container
      const outcome = yield* run(containerId, ["cat"], { stdin: new TextEncoder().encode("through stdin\n") })
      assert.strictEqual(outcome.exitCode, 0)
      assert.strictEqual(outcome.stdout, "through stdin\n")
      const none = yield* run(containerId, ["sh", "-c", "cat; echo done"])
      assert.strictEqual(none.stdout, "done\n")
    }).pipe(Effect.scoped, Effect.provide(runtimeLayer), bounded("the exec did not end", 60))
  )

  it.live("runs in a folder only when it resolves inside `within`", () =>
    Effect.gen(function* () {
      const containerId = yield* container
      const runtime = yield* ContainerRuntime
      const pwd = (cwd: string) =>
        runtime.exec(containerId, ["pwd"], { user: USER, cwd, within: WS, timeoutMs: 20_000, maxOutputBytes: 1024 })
      assert.strictEqual((yield* pwd(`${WS}/sub`)).stdout, `${WS}/sub\n`)
      assert.strictEqual((yield* pwd(WS)).stdout, `${WS}\n`)
      const refusals = yield* Effect.forEach([`${WS}/out`, `${WS}/missing`, `${WS}/file`], (cwd) =>
        Effect.flip(pwd(cwd))
      )
      assert.deepStrictEqual(
        refusals.map((error) => (error._tag === "CwdRefused" ? error.exitCode : error._tag)),
        [RESOLVE_OUTSIDE, RESOLVE_MISSING, CWD_NOT_FOLDER]
      )
    }).pipe(Effect.scoped, Effect.provide(runtimeLayer), bounded("the exec did not end", 60))
  )
})

describe("the probe's exec with a step after its command (real Docker)", () => {
  it.live(
    "a command beside the probe keeps its own bound: past it the exec is killed, the command timed out, the step never run",
    () =>
      Effect.gen(function* () {
        const runtime = yield* ContainerRuntime
        const containerId = yield* container
        // A checkout that hangs (as a planted hook could), bounded at 1.5 s; the step's own bound is a minute.
        const beside = {
          script: `cat > /dev/null; sleep 31.7`,
          args: [],
          stdin: new Uint8Array([1, 2]),
          timeoutMs: 1500
        }
        const then = { argv: ["sh", "-c", "touch /tmp/step-ran"], env: {}, timeoutMs: 60_000, maxOutputBytes: 4096 }
        const started = Date.now()
        const outcome = yield* runProbeBeside(
          runtime,
          containerId,
          (stepMark) => probeBesideArgv("loginShell", "MARK-B", "printenv", 5, beside, undefined, stepMark),
          { user: USER, cwd: "/tmp", maxOutputBytes: 65536 },
          5000,
          { ...beside, then },
          () => ({})
        )
        assert.isBelow(Date.now() - started, 25_000)
        assert.isTrue(outcome.beside.timedOut)
        assert.isNull(outcome.beside.exitCode)
        assert.isUndefined(outcome.step)
        assert.strictEqual(yield* processesWith(containerId, "31.7"), 0, "the hung command was killed with the exec")
        const ran = yield* run(containerId, ["sh", "-c", "test -e /tmp/step-ran && echo ran || echo none"])
        assert.strictEqual(ran.stdout.trim(), "none")
      }).pipe(Effect.scoped, Effect.provide(runtimeLayer), bounded("the exec was not killed", 60)),
    60_000
  )
})

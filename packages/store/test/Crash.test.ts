import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { SandboxId } from "@prbox/domain"
import { Effect, Option } from "effect"
import { databaseIn, freshStateDir, rawDatabase, withRepo } from "./support.ts"

const WRITER = fileURLToPath(new URL("./fixtures/crash-writer.ts", import.meta.url))
const ACKS_BEFORE_KILL = 150

interface Outcome {
  readonly acks: ReadonlyArray<string>
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

/** Kills the writer with SIGKILL as soon as `count` acknowledgements arrived; resolves once it is dead. */
const killAfterAcks = (child: ChildProcess, count: number) =>
  Effect.callback<Outcome>((resume) => {
    const acks: Array<string> = []
    let pending = ""
    let stderr = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (pending + chunk).split("\n")
      pending = lines.pop() ?? ""
      acks.push(...lines)
      if (acks.length >= count) child.kill("SIGKILL")
    })
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    // "close" comes after the pipes drained: every line printed before the kill is in `acks`.
    child.on("close", (_code, signal) => resume(Effect.succeed({ acks, signal, stderr })))
  })

const spawnWriter = (stateDir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(process.execPath, [WRITER, stateDir], { stdio: ["ignore", "pipe", "pipe"] })),
    // Only if the test failed before the planned kill.
    (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
  )

describe("crash safety", () => {
  it.live(
    "a writer killed with SIGKILL mid-stream leaves an intact database holding every acknowledged write",
    () =>
      Effect.gen(function* () {
        const stateDir = yield* freshStateDir
        const outcome = yield* Effect.flatMap(spawnWriter(stateDir), (child) => killAfterAcks(child, ACKS_BEFORE_KILL))
        assert.strictEqual(outcome.signal, "SIGKILL", `the writer ended on its own: ${outcome.stderr}`)
        assert.isAtLeast(outcome.acks.length, ACKS_BEFORE_KILL)

        const inserted = yield* Effect.scoped(
          Effect.gen(function* () {
            // Read-only, so the killed writer's WAL is still there when the repository reopens the file.
            const raw = yield* rawDatabase(databaseIn(stateDir), { readonly: true })
            assert.isTrue(existsSync(`${databaseIn(stateDir)}-wal`))
            assert.strictEqual(raw.pragma("integrity_check", { simple: true }), "ok")
            const status = raw.prepare("SELECT status FROM sandboxes WHERE id = ?").pluck()
            const logLine = raw.prepare("SELECT line FROM sandbox_log WHERE sandbox_id = ? AND seq = ?").pluck()
            const ids: Array<string> = []
            for (const ack of outcome.acks) {
              const [kind, id = "", value = ""] = ack.split(" ")
              if (kind === "insert") {
                ids.push(id)
                assert.isDefined(status.get(id), `acknowledged insert of ${id} is missing`)
              } else if (kind === "log") {
                assert.isDefined(logLine.get(id, Number(value)), `acknowledged log line ${value} of ${id} is missing`)
              } else {
                assert.strictEqual(kind, "status")
                assert.strictEqual(status.get(id), value, `acknowledged status of ${id} is missing`)
              }
            }
            return ids
          })
        )

        // And the repository itself reopens the file (recovering the WAL) and reads every acknowledged row.
        yield* withRepo(stateDir, (repo) =>
          Effect.forEach(inserted, (id) =>
            Effect.map(repo.findById(SandboxId.make(id)), (row) => assert.isTrue(Option.isSome(row), id))
          )
        )
      }),
    60_000
  )
})

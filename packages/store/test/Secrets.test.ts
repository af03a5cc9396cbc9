import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { inspect } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import { PullRequestNumber } from "@prbox/domain"
import { Cause, Effect, Option, Redacted } from "effect"
import { databaseIn, freshStateDir, newSandbox, openRepo, rawDatabase, sandboxId, tempDir } from "./support.ts"

const CANARY = "CANARY-hunter2-7f3a9c"
const withCanary = (n: number, overrides: Parameters<typeof newSandbox>[1] = {}) =>
  newSandbox(n, { accessPassword: Redacted.make(CANARY), ...overrides })

/** Every way an error is commonly turned into text. */
const renderings = (error: unknown): ReadonlyArray<string> => [
  String(error),
  error instanceof Error ? error.message : "",
  error instanceof Error ? (error.stack ?? "") : "",
  JSON.stringify(error),
  inspect(error, { depth: 10 }),
  Cause.pretty(Cause.fail(error))
]

const assertNoCanary = (label: string, value: unknown) => {
  for (const text of renderings(value)) assert.notInclude(text, CANARY, label)
}

describe("the access password never leaks", () => {
  it.effect("through any repository error, or a returned row", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const repo = yield* openRepo(stateDir, { busyTimeoutMillis: 50 })
      const row = yield* repo.insert(withCanary(1))
      assertNoCanary("inserted row", row)
      assertNoCanary("found row", Option.getOrThrow(yield* repo.findById(row.id)))

      const errors: Array<readonly [string, unknown]> = []
      const collect = <A, E>(label: string, effect: Effect.Effect<A, E>) =>
        Effect.map(Effect.flip(effect), (error) => {
          errors.push([label, error])
        })

      yield* collect("LiveSandboxExists", repo.insert(withCanary(2, { pullRequest: PullRequestNumber.make(1) })))
      yield* collect("duplicate id", repo.insert(withCanary(1, { repository: "acme/other" })))
      yield* collect("invalid input", repo.insert(withCanary(3, { createdAt: -1 })))
      yield* collect("InvalidTransition", repo.updateStatus(row.id, { to: "running" }))
      yield* collect("SandboxNotFound", repo.updateStatus(sandboxId(99), { to: "stopping" }))

      const raw = yield* rawDatabase(databaseIn(stateDir))
      raw.exec("BEGIN IMMEDIATE")
      yield* collect("busy", repo.insert(withCanary(4)))
      raw.exec("ROLLBACK")

      // Bad data holding the password where the schema would quote it.
      for (const [n, column, value] of [
        [5, "status", CANARY],
        [6, "host_port", CANARY],
        [7, "access_password", Buffer.from(CANARY)]
      ] as const) {
        const bad = yield* repo.insert(withCanary(n))
        raw.prepare(`UPDATE sandboxes SET ${column} = ? WHERE id = ?`).run(value, bad.id)
        yield* collect(`undecodable ${column}`, repo.findById(bad.id))
      }
      yield* collect("undecodable rows in a list", repo.findAll())

      assert.deepStrictEqual(
        errors.map(([, error]) => (error as { readonly _tag: string })._tag),
        [
          "LiveSandboxExists",
          "StoreError",
          "RowDecodeError",
          "InvalidTransition",
          "SandboxNotFound",
          "StoreError",
          "RowDecodeError",
          "RowDecodeError",
          "RowDecodeError",
          "RowDecodeError"
        ]
      )
      for (const [label, error] of errors) assertNoCanary(label, error)
    })
  )

  it.effect("through errors opening unusable files", () =>
    Effect.gen(function* () {
      const garbageDir = yield* freshStateDir
      mkdirSync(garbageDir, { mode: 0o700 })
      writeFileSync(databaseIn(garbageDir), `${CANARY}\n`.repeat(500), { mode: 0o600 })
      const unreadable = yield* Effect.flip(openRepo(garbageDir))
      assert.strictEqual(unreadable._tag, "DatabaseUnreadable")
      assertNoCanary("DatabaseUnreadable", unreadable)

      const dir = yield* tempDir
      const linkedDir = `${dir}/linked`
      mkdirSync(linkedDir, { mode: 0o700 })
      writeFileSync(`${dir}/target`, CANARY)
      symlinkSync(`${dir}/target`, databaseIn(linkedDir))
      const insecure = yield* Effect.flip(openRepo(linkedDir))
      assert.strictEqual(insecure._tag, "InsecurePermissions")
      assertNoCanary("InsecurePermissions", insecure)
    })
  )
})

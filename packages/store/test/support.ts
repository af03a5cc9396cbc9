import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert } from "@effect/vitest"
import { PullRequestNumber, SandboxId, type SandboxStatus, statePaths } from "@prbox/domain"
import Database from "better-sqlite3"
import { Context, Effect, Layer, Redacted } from "effect"
import { JobRepo } from "../src/JobRepo.ts"
import { layer, type Options } from "../src/node/NodeStore.ts"
import { PoolRepo } from "../src/PoolRepo.ts"
import { PrebuildRepo } from "../src/PrebuildRepo.ts"
import { type NewLogEntry, type NewProgress, type NewSandbox, SandboxRepo } from "../src/SandboxRepo.ts"
import { Settings } from "../src/Settings.ts"

/** A temp directory removed with the test's scope. */
export const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "prbox-store-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** A state directory (not yet created) inside a fresh temp directory. */
export const freshStateDir = Effect.map(tempDir, (dir) => join(dir, "state"))

export const databaseIn = (stateDir: string) => statePaths(stateDir).database

/** The real repository and settings on `stateDir` (one connection), open until the test's scope closes. */
export const openStore = (stateDir: string, options: Omit<Options, "stateDir"> = {}) =>
  Effect.map(Layer.build(layer({ stateDir, ...options })), (context) => ({
    repo: Context.get(context, SandboxRepo),
    settings: Context.get(context, Settings),
    jobs: Context.get(context, JobRepo),
    prebuilds: Context.get(context, PrebuildRepo),
    pool: Context.get(context, PoolRepo)
  }))

/** The real repository on `stateDir`, open until the test's scope closes. */
export const openRepo = (stateDir: string, options: Omit<Options, "stateDir"> = {}) =>
  Effect.map(openStore(stateDir, options), (store) => store.repo)

/** Runs `f` with the repository open, and closes it afterwards. */
export const withRepo = <A, E, R>(stateDir: string, f: (repo: SandboxRepo["Service"]) => Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.flatMap(openRepo(stateDir), f))

/** A raw connection for looking under the repository, closed with the scope. */
export const rawDatabase = (path: string, options: Database.Options = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => new Database(path, options)),
    (db) => Effect.sync(() => db.close())
  )

export const sandboxId = (n: number): SandboxId => SandboxId.make(`sbx${String(n).padStart(9, "0")}`)

export const newSandbox = (n: number, overrides: Partial<NewSandbox> = {}): NewSandbox => ({
  id: sandboxId(n),
  provider: "github",
  host: "github.com",
  account: "4242",
  repository: "acme/widgets",
  pullRequest: PullRequestNumber.make(n),
  accessPassword: Redacted.make(`password-${n}`),
  createdAt: 1_000 + n,
  lastActivityAt: 1_000 + n,
  ...overrides
})

/** A progress line for `appendLog` or `updateDetailAndLog`. */
export const progressEntry = (at: number, line: string, status: SandboxStatus = "creating"): NewProgress => ({
  _tag: "Progress",
  at,
  status,
  line
})

/** A status change for `appendLog`. */
export const statusEntry = (at: number, status: SandboxStatus, error: string | null = null): NewLogEntry => ({
  _tag: "StatusChanged",
  at,
  status,
  error
})

/** Asserts an error's tag and narrows it for the field checks that follow. */
export function assertTag<E extends { readonly _tag: string }, T extends E["_tag"]>(
  error: E,
  tag: T
): asserts error is Extract<E, { readonly _tag: T }> {
  assert.strictEqual(error._tag, tag)
}

import {
  canTransition,
  closedSeenAtAfter,
  InvalidTransition,
  type PullRequestInfo,
  type Sandbox,
  type SandboxId,
  SandboxNotFound,
  type Timestamp
} from "@prbox/domain"
import type Database from "better-sqlite3"
import { Effect, Option, Result } from "effect"
import type {
  LiveSandboxExists,
  LoggedStatusUpdate,
  NewProgress,
  NewSandbox,
  PullRequestSelector,
  SandboxRepoShape,
  StatusUpdate
} from "../SandboxRepo.ts"
import { type ColumnValues, decodeRow, encodeRow, type RawRow, SANDBOX_COLUMNS } from "./Rows.ts"
import { newSandboxRow, sandboxInserts, TERMINAL_STATUSES } from "./SandboxInsert.ts"
import type { SandboxLog } from "./SandboxLog.ts"
import type { Transactions } from "./Transactions.ts"

const keep = <A>(next: A | undefined, current: A): A => (next === undefined ? current : next)

const COLUMNS = SANDBOX_COLUMNS.join(", ")
const NEWEST_FIRST = "ORDER BY created_at DESC, rowid DESC"

export type SandboxRows = Omit<SandboxRepoShape, "generation" | "appendLog" | "readLog">

/** What a row write does to the sandbox's other tables, inside the row write's transaction. */
export interface RowDependents {
  /** Removes the sandbox's log entries and jobs (the row delete). */
  readonly deleteOwnedBy: (id: SandboxId) => void
  /** Appends a journal entry (a status change or progress line written with the row). */
  readonly appendEntry: SandboxLog["appendEntry"]
}

/** The sandboxes table: its queries and its checked writes, some with their journal entry. */
export const sandboxesTable = (
  db: Database.Database,
  { run, write }: Transactions,
  dependents: RowDependents
): SandboxRows => {
  const selectById = db.prepare<[string], RawRow>(`SELECT ${COLUMNS} FROM sandboxes WHERE id = ?`)
  const selectAll = db.prepare<[], RawRow>(`SELECT ${COLUMNS} FROM sandboxes ${NEWEST_FIRST}`)
  const selectActive = db.prepare<[], RawRow>(
    `SELECT ${COLUMNS} FROM sandboxes WHERE status NOT IN (${TERMINAL_STATUSES}) ${NEWEST_FIRST}`
  )
  const selectByPr = db.prepare<[string, string, number], RawRow>(
    `SELECT ${COLUMNS} FROM sandboxes WHERE provider = ? AND repository = ? AND pull_request = ? ${NEWEST_FIRST}`
  )
  const { checkLiveHolder, insertChecked } = sandboxInserts(db)
  const updateRow = db.prepare<ColumnValues>(
    `UPDATE sandboxes SET ${SANDBOX_COLUMNS.filter((column) => column !== "id")
      .map((column) => `${column} = @${column}`)
      .join(", ")} WHERE id = @id`
  )
  const deleteRow = db.prepare<[string]>("DELETE FROM sandboxes WHERE id = ?")

  const decodeAll = (operation: string, rows: ReadonlyArray<RawRow>) =>
    Result.all(rows.map((raw) => decodeRow(operation, raw)))

  /**
   * Read-modify-write of one row in a write transaction; the new row is
   * checked before it is stored, then `then` (given the row before and after)
   * runs in the same transaction: what it writes commits or rolls back with the row.
   */
  const modifyThen = <A, E>(
    operation: string,
    id: SandboxId,
    change: (current: Sandbox) => Result.Result<Sandbox, E>,
    then: (before: Sandbox, after: Sandbox) => A
  ) =>
    write(operation, () =>
      Result.gen(function* () {
        const raw = selectById.get(id)
        if (raw === undefined) return yield* Result.fail(new SandboxNotFound({ id }))
        const current = yield* decodeRow(operation, raw)
        const next = yield* change(current)
        updateRow.run(yield* encodeRow(operation, next))
        return then(current, next)
      })
    )

  const modify = <E>(operation: string, id: SandboxId, change: (current: Sandbox) => Result.Result<Sandbox, E>) =>
    modifyThen(operation, id, change, (_, next) => next)

  const insert = Effect.fn("SandboxRepo.insert")(function* (input: NewSandbox) {
    const row = newSandboxRow(input)
    return yield* write("insert", () => insertChecked("insert", row))
  })

  const findById = Effect.fn("SandboxRepo.findById")(function* (id: SandboxId) {
    return yield* run("findById", () => {
      const raw = selectById.get(id)
      return raw === undefined ? Result.succeed(Option.none()) : Result.map(decodeRow("findById", raw), Option.some)
    })
  })

  const findByPr = Effect.fn("SandboxRepo.findByPr")(function* (pr: PullRequestSelector) {
    return yield* run("findByPr", () =>
      decodeAll("findByPr", selectByPr.all(pr.provider, pr.repository, pr.pullRequest))
    )
  })

  const findActive = Effect.fn("SandboxRepo.findActive")(function* () {
    return yield* run("findActive", () => decodeAll("findActive", selectActive.all()))
  })

  const findAll = Effect.fn("SandboxRepo.findAll")(function* () {
    return yield* run("findAll", () => decodeAll("findAll", selectAll.all()))
  })

  /** A status write's check and new row. */
  const statusChange =
    (operation: string, id: SandboxId, update: StatusUpdate) =>
    (current: Sandbox): Result.Result<Sandbox, InvalidTransition | LiveSandboxExists> => {
      const allowed =
        canTransition(current.status, update.to) && (update.expectedFrom?.includes(current.status) ?? true)
      if (!allowed) return Result.fail(new InvalidTransition({ id, from: current.status, to: update.to }))
      const next: Sandbox = {
        ...current,
        status: update.to,
        containerId: keep(update.containerId, current.containerId),
        hostPort: keep(update.hostPort, current.hostPort),
        error: keep(update.error, current.error),
        setupError: keep(update.setupError, current.setupError),
        environment: keep(update.environment, current.environment),
        environmentPlan: keep(update.environmentPlan, current.environmentPlan),
        detail: keep(update.detail, current.detail),
        legacyRetiredAt: keep(update.legacyRetiredAt, current.legacyRetiredAt),
        destroyFenced: keep(update.destroyFenced, current.destroyFenced),
        stoppedAt: keep(update.stoppedAt, current.stoppedAt),
        workspacePath: keep(update.workspacePath, current.workspacePath),
        sourceBranch: keep(update.sourceBranch, current.sourceBranch),
        sourceCommit: keep(update.sourceCommit, current.sourceCommit)
      }
      // Only a status write can make a row live again (restart), so only it can collide.
      return Result.map(checkLiveHolder(operation, next), () => next)
    }

  const updateStatus = Effect.fn("SandboxRepo.updateStatus")(function* (id: SandboxId, update: StatusUpdate) {
    return yield* modify("updateStatus", id, statusChange("updateStatus", id, update))
  })

  const updateStatusAndLog = Effect.fn("SandboxRepo.updateStatusAndLog")(function* (
    id: SandboxId,
    update: StatusUpdate,
    at: Timestamp
  ) {
    return yield* modifyThen(
      "updateStatusAndLog",
      id,
      statusChange("updateStatusAndLog", id, update),
      (before, row): LoggedStatusUpdate => ({
        row,
        logged:
          before.status !== update.to || update.error !== undefined
            ? Option.some(
                dependents.appendEntry(id, { _tag: "StatusChanged", at, status: update.to, error: row.error })
              )
            : Option.none()
      })
    )
  })

  const setFence = Effect.fn("SandboxRepo.setFence")(function* (id: SandboxId, fenced: boolean) {
    return yield* modify("setFence", id, (current) => Result.succeed({ ...current, destroyFenced: fenced }))
  })

  const updateDetail = Effect.fn("SandboxRepo.updateDetail")(function* (id: SandboxId, detail: string | null) {
    yield* modify("updateDetail", id, (current) => Result.succeed({ ...current, detail }))
  })

  const updateDetailAndLog = Effect.fn("SandboxRepo.updateDetailAndLog")(function* (id: SandboxId, entry: NewProgress) {
    return yield* modifyThen(
      "updateDetailAndLog",
      id,
      (current) => Result.succeed({ ...current, detail: entry.line }),
      () => dependents.appendEntry(id, entry)
    )
  })

  const recordPullRequest = Effect.fn("SandboxRepo.recordPullRequest")(function* (
    id: SandboxId,
    info: PullRequestInfo,
    now: Timestamp
  ) {
    return yield* modify("recordPullRequest", id, (current) =>
      Result.succeed({
        ...current,
        title: info.title,
        author: info.author,
        pullRequestState: info.state,
        baseRef: info.baseRef,
        closedSeenAt: closedSeenAtAfter(info.state, current.closedSeenAt, now)
      })
    )
  })

  const touch = Effect.fn("SandboxRepo.touch")(function* (id: SandboxId, at: Timestamp) {
    yield* modify("touch", id, (current) =>
      Result.succeed({ ...current, lastActivityAt: Math.max(current.lastActivityAt, at) })
    )
  })

  const remove = Effect.fn("SandboxRepo.delete")(function* (id: SandboxId) {
    yield* write("delete", () => {
      if (deleteRow.run(id).changes === 0) return Result.fail(new SandboxNotFound({ id }))
      dependents.deleteOwnedBy(id)
      return Result.void
    })
  })

  return {
    insert,
    findById,
    findByPr,
    findActive,
    findAll,
    updateStatus,
    updateStatusAndLog,
    setFence,
    updateDetail,
    updateDetailAndLog,
    recordPullRequest,
    touch,
    delete: remove
  }
}

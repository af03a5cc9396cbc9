import { Effect, Layer } from "effect"
import { SandboxRepo } from "../SandboxRepo.ts"
import { jobsDeleter } from "./NodeJobRepo.ts"
import { sandboxLogTable } from "./SandboxLog.ts"
import { sandboxesTable } from "./SandboxRows.ts"
import { SqliteDatabase } from "./SqliteDatabase.ts"

/**
 * The repository on the store's connection: the sandboxes table and its
 * journal; deleting a sandbox's row deletes its journal and its jobs in the
 * same transaction.
 */
export const layer: Layer.Layer<SandboxRepo, never, SqliteDatabase> = Layer.effect(
  SandboxRepo,
  Effect.gen(function* () {
    const { db, transactions } = yield* SqliteDatabase
    const log = sandboxLogTable(db, transactions)
    const deleteJobsOf = jobsDeleter(db)
    const rows = sandboxesTable(db, transactions, {
      deleteOwnedBy: (id) => {
        log.deleteEntriesOf(id)
        deleteJobsOf(id)
      },
      appendEntry: log.appendEntry
    })
    return SandboxRepo.of({
      generation: transactions.generation,
      ...rows,
      appendLog: log.appendLog,
      readLog: log.readLog
    })
  })
)

import { chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync, type Stats, statSync } from "node:fs"
import { Effect } from "effect"
import { InsecurePermissions } from "../SandboxRepo.ts"

const operation = "open"
const DIRECTORY_MODE = 0o700
const FILE_MODE = 0o600
/** Files SQLite keeps next to the database; they hold row data too. */
const SIDE_FILES = ["-wal", "-shm", "-journal"]

const errorCode = (cause: unknown): string =>
  cause instanceof Error && "code" in cause && typeof cause.code === "string" ? cause.code : "unknown error"

const insecure = (path: string, detail: string) => new InsecurePermissions({ operation, path, detail })

const fsStep = <A>(path: string, step: string, run: () => A) =>
  Effect.try({ try: run, catch: (cause) => insecure(path, `${step} failed (${errorCode(cause)})`) })

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(3, "0")

type Kind = "directory" | "file"

/**
 * The path must be ours and carry exactly `mode`; a looser (or stricter) mode
 * is repaired, and a mode that cannot be set is an error. Files are checked
 * without following links: a link in the state directory could point the
 * database anywhere. The directory itself may be a link the user made.
 */
const enforce = Effect.fnUntraced(function* (path: string, kind: Kind, mode: number) {
  const read = (): Stats => (kind === "directory" ? statSync(path) : lstatSync(path))
  const stats = yield* fsStep(path, "stat", read)
  if (kind === "directory" ? !stats.isDirectory() : !stats.isFile()) {
    return yield* insecure(path, kind === "directory" ? "not a directory" : "not a regular file")
  }
  const uid = process.getuid?.()
  if (uid !== undefined && stats.uid !== uid) {
    return yield* insecure(path, `owned by uid ${stats.uid}, not by this user (uid ${uid})`)
  }
  if ((stats.mode & 0o777) === mode) return
  yield* fsStep(path, `chmod ${octal(mode)}`, () => chmodSync(path, mode))
  const after = yield* fsStep(path, "stat", read)
  if ((after.mode & 0o777) !== mode) {
    return yield* insecure(path, `mode is still ${octal(after.mode)} after chmod ${octal(mode)}`)
  }
})

/** Creates the file empty with 0600 (SQLite would use 0644), or leaves an existing one alone. */
const createPrivateFile = (path: string) =>
  fsStep(path, "create", () => {
    try {
      closeSync(
        openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, FILE_MODE)
      )
    } catch (cause) {
      if (errorCode(cause) !== "EEXIST") throw cause
    }
  })

const exists = (path: string) =>
  fsStep(path, "stat", () => {
    try {
      lstatSync(path)
      return true
    } catch (cause) {
      if (errorCode(cause) === "ENOENT") return false
      throw cause
    }
  })

/**
 * Makes the state directory 0700 and the database file (and any SQLite side
 * file) 0600 before SQLite opens anything, so no byte is ever written where
 * another user could read it.
 */
export const securePrivateFiles = Effect.fnUntraced(function* (stateDir: string, databasePath: string) {
  yield* fsStep(stateDir, "mkdir", () => mkdirSync(stateDir, { recursive: true, mode: DIRECTORY_MODE }))
  yield* enforce(stateDir, "directory", DIRECTORY_MODE)
  yield* createPrivateFile(databasePath)
  yield* enforce(databasePath, "file", FILE_MODE)
  for (const suffix of SIDE_FILES) {
    const side = `${databasePath}${suffix}`
    if (yield* exists(side)) yield* enforce(side, "file", FILE_MODE)
  }
})

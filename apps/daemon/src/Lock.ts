import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs"
import { Schema } from "effect"

/** Another prboxd holds this PRBOX_HOME. */
export class AlreadyRunning extends Schema.TaggedError<AlreadyRunning>()("AlreadyRunning", {
  pid: Schema.NullOr(Schema.Number),
  detail: Schema.String
}) {
  override get message(): string {
    return `prboxd is already running for this PRBOX_HOME${this.pid === null ? "" : ` (pid ${this.pid})`}: ${this.detail}`
  }
}

export class LockFailed extends Schema.TaggedError<LockFailed>()("LockFailed", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `cannot take the daemon lock ${this.path}: ${this.detail}`
  }
}

const code = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined

const readPid = (path: string): number | null => {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

/**
 * Whether `pid` is a live process that could be a prboxd. A pid reused by an
 * unrelated program (its command line names neither prboxd nor the daemon's
 * entry point) does not hold the lock.
 */
export const isLiveDaemon = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (cause) {
    if (code(cause) !== "EPERM") return false
  }
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")
    return cmdline.includes("prboxd") || cmdline.includes("daemon/src/main.ts")
  } catch {
    // No /proc (not Linux) or gone meanwhile: trust the signal probe.
    return true
  }
}

export interface LockHandle {
  readonly path: string
  readonly pid: number
  readonly release: () => void
}

/**
 * Takes `path` for this process: created with O_EXCL (atomic) holding the
 * pid. A lock whose pid is dead is taken over: it is first renamed to a name
 * of our own (atomic, so of two daemons taking over only one succeeds), and
 * if what we renamed turns out to be a fresh lock of another daemon, it is
 * put back and we refuse.
 */
export const acquireLock = (path: string): LockHandle => {
  const pid = process.pid
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600)
      try {
        writeSync(fd, `${pid}\n`)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
      return {
        path,
        pid,
        release: () => {
          if (readPid(path) === pid) {
            try {
              unlinkSync(path)
            } catch {
              // Already gone.
            }
          }
        }
      }
    } catch (cause) {
      if (code(cause) !== "EEXIST") throw new LockFailed({ path, detail: code(cause) ?? String(cause) })
    }
    const holder = readPid(path)
    if (holder !== null && holder !== pid && isLiveDaemon(holder)) {
      throw new AlreadyRunning({ pid: holder, detail: `lock ${path} is held` })
    }
    // Stale (dead pid, or an empty file from a daemon killed while writing it): take it over.
    const aside = `${path}.stale.${pid}`
    try {
      renameSync(path, aside)
    } catch (cause) {
      if (code(cause) === "ENOENT") continue
      throw new LockFailed({ path, detail: code(cause) ?? String(cause) })
    }
    const renamed = readPid(aside)
    if (renamed !== holder && renamed !== null && isLiveDaemon(renamed)) {
      try {
        linkSync(aside, path)
      } catch {
        // Someone else holds the path now; either way that daemon runs.
      }
      unlinkSync(aside)
      throw new AlreadyRunning({ pid: renamed, detail: `lock ${path} was taken meanwhile` })
    }
    unlinkSync(aside)
  }
  throw new LockFailed({ path, detail: "the lock kept changing hands" })
}

/** The pid in the lock, when a live daemon holds it. */
export const lockHolder = (path: string): number | null => {
  const pid = readPid(path)
  return pid !== null && isLiveDaemon(pid) ? pid : null
}

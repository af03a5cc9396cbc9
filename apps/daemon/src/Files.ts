import { chmodSync, mkdirSync, statSync } from "node:fs"
import { Schema } from "effect"

/** A private directory or file could not be made private: the daemon refuses to start (guarantee 9). */
export class InsecureFiles extends Schema.TaggedError<InsecureFiles>()("InsecureFiles", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `refusing to use ${this.path}: ${this.detail}`
  }
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(3, "0")

const code = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : String(cause)

/**
 * Creates `path` as a 0700 directory owned by this user, or makes an
 * existing one exactly 0700; throws InsecureFiles when that cannot be done.
 */
export const privateDirectory = (path: string): void => {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 })
  } catch (cause) {
    throw new InsecureFiles({ path, detail: `mkdir failed (${code(cause)})` })
  }
  const stats = statSync(path)
  if (!stats.isDirectory()) throw new InsecureFiles({ path, detail: "not a directory" })
  const uid = process.getuid?.()
  if (uid !== undefined && stats.uid !== uid) {
    throw new InsecureFiles({ path, detail: `owned by uid ${stats.uid}, not by this user (uid ${uid})` })
  }
  if ((stats.mode & 0o777) !== 0o700) {
    try {
      chmodSync(path, 0o700)
    } catch (cause) {
      throw new InsecureFiles({ path, detail: `chmod 700 failed (${code(cause)})` })
    }
    const after = statSync(path).mode
    if ((after & 0o777) !== 0o700) throw new InsecureFiles({ path, detail: `mode is still ${octal(after)}` })
  }
}

export const modeOf = (path: string): number => statSync(path).mode & 0o777

/** The daemon cannot start; the message says why (shown on stderr and in the log). */
export class StartupFailed extends Schema.TaggedError<StartupFailed>()("StartupFailed", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/** A failure while starting, as StartupFailed (its message kept). */
export const startupFailure = (cause: unknown): StartupFailed =>
  cause instanceof StartupFailed
    ? cause
    : new StartupFailed({ detail: cause instanceof Error ? cause.message : String(cause) })

import { closeSync, constants, fstatSync, openSync, renameSync, writeSync } from "node:fs"
import { Cause, Logger } from "effect"

/**
 * An append-only log file that rotates by size: `prboxd.log` is renamed to
 * `prboxd.log.1` (and so on, `keep` files) when the next line would pass
 * `maxBytes`. Files are created 0600; writes are synchronous so the last
 * lines before a crash are on disk.
 */
export class RotatingFile {
  readonly path: string
  readonly maxBytes: number
  readonly keep: number
  private fd: number
  private size: number

  constructor(path: string, options: { readonly maxBytes?: number; readonly keep?: number } = {}) {
    this.path = path
    this.maxBytes = options.maxBytes ?? 5 * 1024 * 1024
    this.keep = options.keep ?? 3
    this.fd = this.openFile()
    this.size = fstatSync(this.fd).size
  }

  private openFile(): number {
    return openSync(
      this.path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600
    )
  }

  write(text: string): void {
    const bytes = Buffer.byteLength(text)
    if (this.size > 0 && this.size + bytes > this.maxBytes) this.rotate()
    writeSync(this.fd, text)
    this.size += bytes
  }

  private rotate(): void {
    closeSync(this.fd)
    for (let index = this.keep - 1; index >= 1; index--) {
      try {
        renameSync(`${this.path}.${index}`, `${this.path}.${index + 1}`)
      } catch {
        // Not there yet.
      }
    }
    renameSync(this.path, `${this.path}.1`)
    this.fd = this.openFile()
    this.size = 0
  }

  close(): void {
    closeSync(this.fd)
  }
}

const render = (options: Logger.Options<unknown>): string => {
  const message = Array.isArray(options.message) ? options.message.map(String).join(" ") : String(options.message)
  const cause = Cause.hasFails(options.cause) || Cause.hasDies(options.cause) ? ` ${Cause.pretty(options.cause)}` : ""
  return `${options.date.toISOString()} ${options.logLevel.toUpperCase()} ${message}${cause}\n`
}

/** Effect's log output goes to the rotating file, and to stderr when running in the foreground. */
export const layer = (file: RotatingFile, options: { readonly stderr: boolean }) =>
  Logger.layer([
    Logger.make((entry) => {
      const line = render(entry)
      file.write(line)
      if (options.stderr) process.stderr.write(line)
    })
  ])

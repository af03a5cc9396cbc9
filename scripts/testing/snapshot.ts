import { createHash } from "node:crypto"
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs"
import { join } from "node:path"

/** The paths below `dir` (itself as "."), never through a link (Node's recursive readdir follows them). */
const entriesOf = (dir: string, at = "."): Array<string> =>
  lstatSync(join(dir, at)).isDirectory()
    ? [at, ...readdirSync(join(dir, at)).flatMap((name) => entriesOf(dir, at === "." ? name : `${at}/${name}`))]
    : [at]

/**
 * Every entry of `dir`, by its path relative to it: mode, owner, and a
 * file's hash or a link's target. Equal snapshots, before and after an
 * attack, show that nothing below `dir` changed.
 */
export const folderSnapshot = (dir: string): Record<string, string> =>
  Object.fromEntries(
    entriesOf(dir).map((path) => {
      const full = join(dir, path)
      const info = lstatSync(full)
      const what = info.isSymbolicLink()
        ? `-> ${readlinkSync(full)}`
        : info.isFile()
          ? createHash("sha256").update(readFileSync(full)).digest("hex")
          : "dir"
      return [path, `${(info.mode & 0o7777).toString(8)} ${info.uid}:${info.gid} ${what}`]
    })
  )

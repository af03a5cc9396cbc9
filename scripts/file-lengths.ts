// The layout's size rule: no source file of a package or an app over 300
// lines, so each keeps to one job. `pnpm structure` runs it after the
// dependency rules; `--limit N` shows it failing on today's longest files.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"

const flag = process.argv.indexOf("--limit")
const limit = flag === -1 ? 300 : Number(process.argv[flag + 1])
const root = join(import.meta.dirname, "..")
const sources = execFileSync(
  "git",
  ["ls-files", "-co", "--exclude-standard", ":(glob)packages/*/src/**", ":(glob)apps/*/src/**"],
  {
    cwd: root,
    encoding: "utf8"
  }
)
  .split("\n")
  .filter((path) => /\.(ts|cjs|mjs)$/.test(path))

const over = sources
  .map((path) => ({ path, lines: readFileSync(join(root, path), "utf8").split("\n").length - 1 }))
  .filter((file) => file.lines > limit)
  .sort((a, b) => b.lines - a.lines)

for (const file of over) console.error(`${file.path}: ${file.lines} lines (at most ${limit})`)
if (over.length > 0) {
  console.error(`${over.length} source file(s) over ${limit} lines: split by concern`)
  process.exitCode = 1
} else {
  console.log(`no source file over ${limit} lines (${sources.length} files)`)
}

import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import { gitSync } from "../../git/test/helpers.ts"

export interface DotfilesLayout {
  /** Committed files (scripts executable), by path. */
  readonly files: Readonly<Record<string, string>>
  /** Committed symbolic links: path to target. */
  readonly links?: Readonly<Record<string, string>>
  /** Files in the folder that are not committed. */
  readonly untracked?: Readonly<Record<string, string>>
}

const write = (root: string, path: string, text: string, mode = 0o644) => {
  const file = join(root, path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
  chmodSync(file, mode)
}

/**
 * A dotfiles repository on this machine (a plain repository with a work
 * tree, as a user keeps one), its files committed on `main`; removed when the
 * scope closes. Its path.
 */
export const dotfilesRepository = (layout: DotfilesLayout) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = realpathSync(mkdtempSync(join(tmpdir(), "prbox-dotfiles-")))
      const work = join(root, "dots")
      gitSync(root, "init", "--quiet", "--initial-branch=main", work)
      for (const [path, text] of Object.entries(layout.files)) {
        write(work, path, text, text.startsWith("#!") ? 0o755 : 0o644)
      }
      for (const [path, target] of Object.entries(layout.links ?? {})) symlinkSync(target, join(work, path))
      gitSync(work, "add", "--all")
      gitSync(work, "commit", "--quiet", "-m", "dotfiles")
      for (const [path, text] of Object.entries(layout.untracked ?? {})) write(work, path, text)
      return work
    }),
    (work) => Effect.sync(() => rmSync(dirname(work), { recursive: true, force: true }))
  )

/**
 * A Compose project's files, copied from the PR's commit in the mirror into
 * prbox's own state (the sandbox's sealed folder, `compose/`, 0700, removed
 * with the sandbox): what Compose
 * reads, never the workspace. The commit's reader lists no symbolic link
 * and refuses to read one, so the copy holds files and folders only: a
 * link in the PR (`.env -> ~/.ssh/id_rsa`) is left out and Compose never
 * follows it. Bounded: a folder is copied up to a count and a size.
 */
import { posixPath, statePaths } from "@prbox/domain"
import { Effect, type FileSystem } from "effect"
import { SetupFailed } from "../Errors.ts"
import type { RepositoryFiles } from "./ChooseEnvironment.ts"

const MAX_FILES = 2000
const MAX_BYTES = 64 * 1024 * 1024

/** A sandbox's Compose folder, in its sealed folder: `repository/` the copy, the project prbox runs beside it. */
export const composeFolder = (home: string, sandboxId: string) => {
  const sandbox = statePaths(home).sandbox(sandboxId)
  const root = posixPath.join(sandbox.sealed ?? sandbox.root, "compose")
  return { root, repository: posixPath.join(root, "repository"), project: posixPath.join(root, "prbox-compose.json") }
}

/** Writes copied files under `root`, counting what it copied against the bounds. */
export const copier = (fs: FileSystem.FileSystem, files: RepositoryFiles, root: string) => {
  let count = 0
  let bytes = 0
  const failed = (path: string) => (error: { readonly message: string }) =>
    new SetupFailed({ reason: `dockerComposeFile: ${path} cannot be copied from the pull request (${error.message})` })
  const folder = (path: string) =>
    fs.makeDirectory(posixPath.join(root, path), { recursive: true, mode: 0o700 }).pipe(Effect.mapError(failed(path)))

  /** One file (undefined content: not in the commit, or not a file; nothing written). */
  const file = (path: string) =>
    Effect.gen(function* () {
      const text = yield* files.read(path).pipe(Effect.mapError(failed(path)))
      if (text === undefined) return false
      count += 1
      bytes += new TextEncoder().encode(text).length
      if (count > MAX_FILES || bytes > MAX_BYTES) {
        return yield* new SetupFailed({
          reason: `dockerComposeFile: the Compose project's files are more than ${MAX_FILES} files or ${MAX_BYTES / 1024 / 1024} MB`
        })
      }
      yield* folder(posixPath.dirname(path))
      yield* fs.writeFileString(posixPath.join(root, path), text, { mode: 0o600 }).pipe(Effect.mapError(failed(path)))
      return true
    })

  /** A folder's files; `recursive` its subfolders too. Links are never listed, so never copied. */
  const tree = (dir: string, recursive: boolean): Effect.Effect<boolean, SetupFailed> =>
    Effect.gen(function* () {
      const entries = yield* files.list(dir).pipe(Effect.mapError(failed(dir === "" ? "." : dir)))
      if (entries === undefined) return false
      yield* folder(dir)
      for (const entry of entries) {
        const path = dir === "" ? entry.name : `${dir}/${entry.name}`
        if (entry.type === "file") yield* file(path)
        else if (recursive) yield* tree(path, true)
      }
      return true
    })

  return { file, tree, folder }
}

/**
 * The copy Compose renders from: the files directly in each Compose file's
 * folder (the Compose files, `.env`, env files beside them), in a fresh
 * 0700 folder. `files` are repository-relative.
 */
export const copyComposeFiles = Effect.fn("SandboxService.copyComposeFiles")(function* (
  fs: FileSystem.FileSystem,
  files: RepositoryFiles,
  folder: ReturnType<typeof composeFolder>,
  composeFiles: ReadonlyArray<string>
) {
  const host = (error: { readonly message: string }) =>
    new SetupFailed({ reason: `the Compose folder cannot be made (${error.message})` })
  yield* fs.remove(folder.root, { recursive: true, force: true }).pipe(Effect.mapError(host))
  yield* fs.makeDirectory(folder.root, { recursive: true, mode: 0o700 }).pipe(Effect.mapError(host))
  yield* fs.chmod(folder.root, 0o700).pipe(Effect.mapError(host))
  const copy = copier(fs, files, folder.repository)
  yield* copy.folder("")
  const folders = [...new Set(composeFiles.map((path) => posixPath.dirname(path).replace(/^\.$/, "")))]
  for (const dir of folders) yield* copy.tree(dir, false)
  for (const path of composeFiles) {
    if (!(yield* fs.exists(posixPath.join(folder.repository, path)).pipe(Effect.orElseSucceed(() => false)))) {
      return yield* new SetupFailed({
        reason: `dockerComposeFile: ${path} is not a file of the pull request (a symbolic link is not followed)`
      })
    }
  }
})

/**
 * What the rendered project binds from the repository (sources under the
 * copy), copied in too: a file, or a folder with all it holds. Paths are
 * the copy's absolute ones, as Compose prints them.
 */
export const copyBindSources = Effect.fn("SandboxService.copyBindSources")(function* (
  fs: FileSystem.FileSystem,
  files: RepositoryFiles,
  folder: ReturnType<typeof composeFolder>,
  sources: ReadonlyArray<string>
) {
  const copy = copier(fs, files, folder.repository)
  for (const source of new Set(sources)) {
    const path = posixPath.relative(folder.repository, source)
    if (path.startsWith("..") || posixPath.isAbsolute(path)) continue
    if (path === "") continue
    if (!(yield* copy.file(path))) yield* copy.tree(path, true)
  }
})

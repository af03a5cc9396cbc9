/**
 * A Compose project's files, copied from the PR's commit in the mirror into
 * prbox's own state (the sandbox's sealed folder, `compose/`, 0700, removed
 * with the sandbox): what Compose reads, never the workspace. Exactly what
 * rendering needs is copied, byte for byte: the Compose files, `.env` beside
 * the first, each path the pre-render check lists (env_file, label_file,
 * extends.file and include, each of those checked in turn, build contexts'
 * folders), then what the rendered project binds from the repository. The
 * commit's reader lists no symbolic link and refuses to read one, so the
 * copy holds files and folders only: a link in the PR (`.env ->
 * ~/.ssh/id_rsa`) is left out and Compose never follows it. Bounded: a count
 * of files and of bytes. An executable bit is not copied.
 */
import { type ComposeFileText, type ComposeRead, checkComposeFiles } from "@prbox/devcontainer"
import { posixPath, statePaths } from "@prbox/domain"
import { Effect, type FileSystem } from "effect"
import { SetupFailed } from "../Errors.ts"
import type { RepositoryFiles } from "./ChooseEnvironment.ts"

const MAX_FILES = 2000
const MAX_BYTES = 64 * 1024 * 1024
/** Compose files brought in by `extends.file` and `include`, at most. */
const MAX_COMPOSE_FILES = 50

/** A sandbox's Compose folder, in its sealed folder: `repository/` the copy, the project prbox runs beside it. */
export const composeFolder = (home: string, sandboxId: string) => {
  const sandbox = statePaths(home).sandbox(sandboxId)
  const root = posixPath.join(sandbox.sealed ?? sandbox.root, "compose")
  return { root, repository: posixPath.join(root, "repository"), project: posixPath.join(root, "prbox-compose.json") }
}

/**
 * Writes copied files under `root`, counting what it copied against the
 * bounds. Readable by all (0644, folders 0755): a bound file is read by the
 * service's own user; the host's other users never reach it, the Compose
 * folder above being 0700.
 */
export const copier = (fs: FileSystem.FileSystem, files: RepositoryFiles, root: string) => {
  let count = 0
  let bytes = 0
  const failed = (path: string) => (error: { readonly message: string }) =>
    new SetupFailed({ reason: `dockerComposeFile: ${path} cannot be copied from the pull request (${error.message})` })
  const folder = (path: string) =>
    fs.makeDirectory(posixPath.join(root, path), { recursive: true, mode: 0o755 }).pipe(Effect.mapError(failed(path)))

  /** One file, as its folder lists it (a link never is); false when there is none. */
  const file = (path: string) =>
    Effect.gen(function* () {
      const dir = posixPath.dirname(path).replace(/^\.$/, "")
      const entries = yield* files.list(dir).pipe(Effect.mapError(failed(dir === "" ? "." : dir)))
      const name = posixPath.basename(path)
      if (entries?.some((entry) => entry.name === name && entry.type === "file") !== true) return false
      if (files.readBytes === undefined) {
        return yield* new SetupFailed({
          reason: `dockerComposeFile: ${path} cannot be copied byte for byte from where this configuration is read`
        })
      }
      const content = yield* files.readBytes(path, MAX_BYTES - bytes).pipe(Effect.mapError(failed(path)))
      if (content === undefined) return false
      count += 1
      bytes += content.length
      if (count > MAX_FILES || bytes > MAX_BYTES) {
        return yield* new SetupFailed({
          reason: `dockerComposeFile: the Compose project's files are more than ${MAX_FILES} files or ${MAX_BYTES / 1024 / 1024} MB`
        })
      }
      yield* folder(dir)
      yield* fs.writeFile(posixPath.join(root, path), content, { mode: 0o644 }).pipe(Effect.mapError(failed(path)))
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
 * The copy Compose renders from, in a fresh 0700 folder: the Compose files
 * (each must be a file of the PR), `.env` beside the first, and what the
 * pre-render check lists (devcontainer's checkComposeFiles, which refuses a
 * path Compose would read outside the repository). `composeFiles` are
 * repository-relative; their texts are returned, as copied.
 */
export const copyComposeFiles = Effect.fn("SandboxService.copyComposeFiles")(function* (
  fs: FileSystem.FileSystem,
  files: RepositoryFiles,
  folder: ReturnType<typeof composeFolder>,
  composeFiles: ReadonlyArray<string>,
  trusted: boolean
) {
  const host = (error: { readonly message: string }) =>
    new SetupFailed({ reason: `the Compose folder cannot be made (${error.message})` })
  yield* fs.remove(folder.root, { recursive: true, force: true }).pipe(Effect.mapError(host))
  yield* fs.makeDirectory(folder.root, { recursive: true, mode: 0o700 }).pipe(Effect.mapError(host))
  yield* fs.chmod(folder.root, 0o700).pipe(Effect.mapError(host))
  const copy = copier(fs, files, folder.repository)
  yield* copy.folder("")
  /** A Compose file copied and read back; refused when the PR has no such file. */
  const composeFile = (path: string, property: string) =>
    Effect.gen(function* () {
      if (!(yield* copy.file(path))) {
        return yield* new SetupFailed({
          reason: `${property}: ${path} is not a file of the pull request (a symbolic link is not followed)`
        })
      }
      const text = yield* fs
        .readFileString(posixPath.join(folder.repository, path))
        .pipe(Effect.mapError((error) => new SetupFailed({ reason: `${path} cannot be read (${error.message})` })))
      return { path, text } satisfies ComposeFileText
    })
  const texts = yield* Effect.forEach(composeFiles, (path) => composeFile(path, "dockerComposeFile"))
  const first = composeFiles[0]
  if (first !== undefined) yield* copy.file(posixPath.join(posixPath.dirname(first), ".env").replace(/^\.\//, ""))
  const refused = (error: { readonly message: string }) => new SetupFailed({ reason: error.message })
  const pending: Array<ComposeRead> = [...(yield* checkComposeFiles(texts, trusted).pipe(Effect.mapError(refused)))]
  const seen = new Set(composeFiles)
  for (let read = pending.shift(); read !== undefined; read = pending.shift()) {
    if (read.kind === "file") yield* copy.file(read.path)
    else if (read.kind === "folder") {
      if ((yield* files.list(read.path).pipe(Effect.orElseSucceed(() => undefined))) !== undefined) {
        yield* copy.folder(read.path)
      }
    } else if (!seen.has(read.path)) {
      seen.add(read.path)
      if (seen.size > composeFiles.length + MAX_COMPOSE_FILES) {
        return yield* new SetupFailed({
          reason: `dockerComposeFile: more than ${MAX_COMPOSE_FILES} Compose files are brought in by extends and include`
        })
      }
      // Its own paths are its folder's (Compose resolves an extended or included file's there).
      const text = yield* composeFile(read.path, read.property)
      const more = yield* checkComposeFiles([text], trusted, posixPath.dirname(read.path).replace(/^\.$/, "")).pipe(
        Effect.mapError(refused)
      )
      pending.push(...more)
    }
  }
  return texts
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

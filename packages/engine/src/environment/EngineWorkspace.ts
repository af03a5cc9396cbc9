import { ArchiveRead, contextSkip } from "@prbox/docker"
import { posixPath } from "@prbox/domain"
import { Effect, type FileSystem } from "effect"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import type { RepositoryFiles } from "./ChooseEnvironment.ts"

/** devcontainer.json, a Dockerfile: what a configuration read takes at most. */
const MAX_FILE_BYTES = 1024 * 1024
const MAX_LIST_ENTRIES = 10_000
/** Links followed from one path before the read gives up. */
const MAX_LINKS = 8

const message = (error: { readonly message: string }) => ({ message: error.message })

/** Where a link in the workspace leads, relative to it; undefined when out of it (or absolute). */
const followed = (from: string, target: string): string | undefined => {
  if (posixPath.isAbsolute(target)) return undefined
  const next = posixPath.normalize(posixPath.join(posixPath.dirname(from), target))
  return next === ".." || next.startsWith("../") ? undefined : next
}

/**
 * A sandbox's workspace of this machine as the engine reads it (runtime
 * `readFolder`), for when a container of it may have run and the host must
 * not resolve paths through it: a stopped sandbox's rebuild. A link is
 * followed only inside the workspace, as the read's own lookup; a folder
 * behind a link is not listed. Missing is undefined; anything else
 * unreadable fails.
 */
export const engineWorkspaceFiles = (
  runtime: ContainerRuntimeShape,
  workspacePath: string,
  labels: Readonly<Record<string, string>>
): RepositoryFiles => {
  /** A file's bytes, links followed inside the workspace. */
  const bytes = (path: string, maxBytes: number) =>
    Effect.scoped(
      Effect.gen(function* () {
        let current: string | undefined = posixPath.normalize(path)
        for (let hop = 0; hop <= MAX_LINKS && current !== undefined; hop++) {
          const archive = yield* runtime.readFolder(workspacePath, current, labels)
          if (archive === undefined) return undefined
          const found = yield* ArchiveRead.readArchivedPath(archive, maxBytes)
          if (found.kind === "symlink") {
            current = followed(current, found.target)
            continue
          }
          if (found.kind !== "file") return undefined
          if (found.truncated) return yield* Effect.fail({ message: `${path} is larger than ${maxBytes} bytes` })
          return found.content
        }
        return current === undefined ? undefined : yield* Effect.fail({ message: `${path}: too many links` })
      })
    ).pipe(Effect.mapError(message))
  return {
    read: (path) =>
      Effect.flatMap(bytes(path, MAX_FILE_BYTES), (content) =>
        content === undefined
          ? Effect.succeed(undefined)
          : content.includes(0)
            ? Effect.fail({ message: `${path} is not text` })
            : Effect.succeed(content.toString("utf8"))
      ),
    readBytes: bytes,
    list: (dir) =>
      Effect.scoped(
        Effect.gen(function* () {
          const archive = yield* runtime.readFolder(workspacePath, posixPath.normalize(dir), labels)
          if (archive === undefined) return undefined
          const children = yield* ArchiveRead.listArchivedFolder(archive, MAX_LIST_ENTRIES)
          return children?.map(
            (child) => ({ name: child.name, type: child.kind === "directory" ? "dir" : "file" }) as const
          )
        })
      ).pipe(Effect.mapError(message))
  }
}

/** What a rebuild's copy of its context may hold at most (Docker sends a sparse file whole). */
const MAX_CONTEXT_BYTES = 4 * 1024 * 1024 * 1024
const MAX_CONTEXT_ENTRIES = 200_000

/**
 * A copy of the workspace's folder `context` in a temporary folder of this
 * machine (removed with the scope), read by the engine as `engineWorkspaceFiles`
 * reads, without what its `.dockerignore` leaves out of the build: what a
 * rebuild's image is built from (`dockerfile` relative to the context).
 * Its path, or undefined when the workspace has no such folder (or it is a
 * link). A larger context than the bounds fails.
 */
export const stageContext = (
  fs: FileSystem.FileSystem,
  runtime: ContainerRuntimeShape,
  workspacePath: string,
  context: string,
  dockerfile: string,
  labels: Readonly<Record<string, string>>
) =>
  Effect.gen(function* () {
    const folder = posixPath.normalize(context)
    const ignore = yield* engineWorkspaceFiles(runtime, workspacePath, labels)
      .read(posixPath.join(folder, ".dockerignore"))
      .pipe(Effect.orElseSucceed(() => undefined))
    const archive = yield* runtime.readFolder(workspacePath, folder, labels)
    if (archive === undefined) return undefined
    const staging = yield* fs.makeTempDirectoryScoped({ prefix: "prbox-context-" })
    // The context itself a link: the engine sent the link, which must lead this machine's build nowhere.
    const root = yield* ArchiveRead.extractArchive(archive, staging, {
      maxBytes: MAX_CONTEXT_BYTES,
      maxEntries: MAX_CONTEXT_ENTRIES,
      skip: contextSkip(ignore ?? "", [dockerfile, ".dockerignore"])
    })
    return root === undefined ? undefined : posixPath.join(staging, root)
  })

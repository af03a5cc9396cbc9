import * as NodePath from "node:path"
import { ArchiveRead } from "@prbox/docker"
import { Effect, type FileSystem } from "effect"
import type { RepositoryFiles } from "./ChooseEnvironment.ts"
import type { ContainerRuntimeShape } from "./ContainerRuntime.ts"

/** devcontainer.json, a Dockerfile: what a configuration read takes at most. */
const MAX_FILE_BYTES = 1024 * 1024
const MAX_LIST_ENTRIES = 10_000
/** Links followed from one path before the read gives up. */
const MAX_LINKS = 8

const message = (error: { readonly message: string }) => ({ message: error.message })

/** Where a link in the workspace leads, relative to it; undefined when out of it (or absolute). */
const followed = (from: string, target: string): string | undefined => {
  if (NodePath.posix.isAbsolute(target)) return undefined
  const next = NodePath.posix.normalize(NodePath.posix.join(NodePath.posix.dirname(from), target))
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
): RepositoryFiles => ({
  read: (path) =>
    Effect.scoped(
      Effect.gen(function* () {
        let current: string | undefined = NodePath.posix.normalize(path)
        for (let hop = 0; hop <= MAX_LINKS && current !== undefined; hop++) {
          const archive = yield* runtime.readFolder(workspacePath, current, labels)
          if (archive === undefined) return undefined
          const found = yield* ArchiveRead.readArchivedPath(archive, MAX_FILE_BYTES)
          if (found.kind === "symlink") {
            current = followed(current, found.target)
            continue
          }
          if (found.kind !== "file") return undefined
          if (found.truncated) return yield* Effect.fail({ message: `${path} is larger than ${MAX_FILE_BYTES} bytes` })
          if (found.content.includes(0)) return yield* Effect.fail({ message: `${path} is not text` })
          return found.content.toString("utf8")
        }
        return current === undefined ? undefined : yield* Effect.fail({ message: `${path}: too many links` })
      })
    ).pipe(Effect.mapError(message)),
  list: (dir) =>
    Effect.scoped(
      Effect.gen(function* () {
        const archive = yield* runtime.readFolder(workspacePath, NodePath.posix.normalize(dir), labels)
        if (archive === undefined) return undefined
        const children = yield* ArchiveRead.listArchivedFolder(archive, MAX_LIST_ENTRIES)
        return children?.map(
          (child) => ({ name: child.name, type: child.kind === "directory" ? "dir" : "file" }) as const
        )
      })
    ).pipe(Effect.mapError(message))
})

/**
 * A copy of the workspace's folder `context` in a temporary folder of this
 * machine (removed with the scope), read by the engine as `engineWorkspaceFiles`
 * reads: what a rebuild's image is built from. Its path, or undefined when
 * the workspace has no such folder.
 */
export const stageContext = (
  fs: FileSystem.FileSystem,
  runtime: ContainerRuntimeShape,
  workspacePath: string,
  context: string,
  labels: Readonly<Record<string, string>>
) =>
  Effect.gen(function* () {
    const archive = yield* runtime.readFolder(workspacePath, NodePath.posix.normalize(context), labels)
    if (archive === undefined) return undefined
    const staging = yield* fs.makeTempDirectoryScoped({ prefix: "prbox-context-" })
    // The context itself a link: the engine sent the link, which must lead this machine's build nowhere.
    const folder = yield* ArchiveRead.extractArchive(archive, staging)
    return folder === undefined ? undefined : NodePath.join(staging, folder)
  })

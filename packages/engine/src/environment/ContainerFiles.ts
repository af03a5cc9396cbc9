import { posixPath } from "@prbox/domain"
import { Effect } from "effect"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import type { ExecTarget } from "../exec/ExecTarget.ts"
import { runScript } from "../exec/FileExec.ts"
import { parseListing } from "../exec/FileListing.ts"
import { EXIT, LIST_SH, READ_SH } from "../exec/FileScripts.ts"
import { RESOLVE_MISSING } from "../exec/WorkspaceResolve.ts"
import type { RepositoryFiles } from "./ChooseEnvironment.ts"

/** devcontainer.json, a Dockerfile: what a configuration read takes at most. */
const MAX_FILE_BYTES = 1024 * 1024
const MAX_LIST_BYTES = 1024 * 1024

/**
 * A running sandbox's workspace as the container sees it (an edit made in
 * the sandbox is what `rebuild` reads), read by the container's own tools as
 * its user: paths are resolved there and confined to the workspace, never
 * on this machine. Missing is undefined; anything else unreadable fails.
 */
export const containerFiles = (runtime: ContainerRuntimeShape, target: ExecTarget): RepositoryFiles => {
  const absolute = (path: string) => posixPath.join(target.workspaceFolder, path)
  const failed = (path: string, why: string) => Effect.fail({ message: `${path} ${why}` })
  return {
    read: (path) =>
      Effect.gen(function* () {
        const outcome = yield* runScript(
          runtime,
          target,
          "configuration read",
          READ_SH,
          [target.workspaceFolder, absolute(path), "1", "$", String(MAX_FILE_BYTES + 1)],
          { outputBytes: MAX_FILE_BYTES + 256 }
        )
        if (outcome.exitCode === RESOLVE_MISSING) return undefined
        if (outcome.exitCode === EXIT.isDirectory || outcome.exitCode === EXIT.notRegularFile) return undefined
        if (outcome.exitCode !== 0)
          return yield* failed(path, `cannot be read in the sandbox (exit ${outcome.exitCode})`)
        const newline = outcome.stdout.indexOf("\n")
        const [size = NaN, , nuls = NaN] = outcome.stdout.slice(0, newline).split(" ").map(Number)
        if (newline < 0 || Number.isNaN(size))
          return yield* failed(path, "was not read: the sandbox's answer is not understood")
        if (size > MAX_FILE_BYTES) return yield* failed(path, `is larger than ${MAX_FILE_BYTES} bytes`)
        if (nuls > 0) return yield* failed(path, "is not text")
        return outcome.stdout.slice(newline + 1)
      }).pipe(Effect.mapError((error) => ({ message: error.message }))),
    list: (dir) =>
      Effect.gen(function* () {
        const outcome = yield* runScript(
          runtime,
          target,
          "configuration list",
          LIST_SH,
          [target.workspaceFolder, absolute(dir), "1", String(MAX_LIST_BYTES)],
          { outputBytes: MAX_LIST_BYTES }
        )
        if (outcome.exitCode === RESOLVE_MISSING || outcome.exitCode === EXIT.notDirectory) return undefined
        if (outcome.exitCode !== 0)
          return yield* failed(dir, `cannot be listed in the sandbox (exit ${outcome.exitCode})`)
        const listing = parseListing(".", outcome.stdout, { maxEntries: 10_000, maxBytes: MAX_LIST_BYTES })
        return listing.entries.map((entry) => ({
          name: entry.path,
          type: entry.type === "directory" ? ("dir" as const) : ("file" as const)
        }))
      }).pipe(Effect.mapError((error) => ({ message: error.message })))
  }
}

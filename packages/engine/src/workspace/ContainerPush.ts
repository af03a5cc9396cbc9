import { GitCommandFailed, REPOSITORY_ENV } from "@prbox/git"
import { Effect } from "effect"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import type { ExecTarget } from "../exec/ExecTarget.ts"
import { EXIT } from "../exec/FileScripts.ts"
import { GitMissing, SANDBOX_GIT_ENV } from "./ContainerWorkspaceGit.ts"

/** A bundle of review fixes past this is not what `prbox push` is for; it is refused, never cut. */
export const MAX_BUNDLE_BYTES = 256 * 1024 * 1024
const BUNDLE_TIMEOUT_MS = 5 * 60_000

/**
 * The sandbox's commits on top of `head` as a git bundle written to stdout
 * by the sandbox's own git, as its user: only stdout reaches the caller
 * (git's messages go nowhere), so the bytes are the bundle's.
 */
const BUNDLE_SH = `command -v git >/dev/null 2>&1 || exit ${EXIT.noGit}
unset ${REPOSITORY_ENV.join(" ")}
exec git -c "safe.directory=$1" "--git-dir=$1/.git" bundle create - HEAD "^$2" 2>/dev/null
`

/**
 * The bundle of the workspace's commits past `head` (one ref, `HEAD`),
 * moved out of the container as data. What it holds is the sandbox's:
 * the caller checks it on the host before anything uses it.
 */
export const bundleFromSandbox = (runtime: ContainerRuntimeShape, target: ExecTarget, head: string) =>
  Effect.gen(function* () {
    const operation = "git bundle in the sandbox"
    const chunks: Array<Uint8Array> = []
    let size = 0
    let tooLarge = false
    const command = yield* runtime
      .spawn(
        target.containerId,
        ["sh", "-c", BUNDLE_SH, "prbox-bundle", target.workspaceFolder, head],
        {
          user: target.user,
          cwd: target.workspaceFolder,
          env: SANDBOX_GIT_ENV,
          timeoutMs: BUNDLE_TIMEOUT_MS
        },
        (chunk) => {
          size += chunk.length
          if (size > MAX_BUNDLE_BYTES) tooLarge = true
          else chunks.push(chunk)
        }
      )
      .pipe(Effect.mapError((error) => new GitCommandFailed({ operation, detail: error.message, exitCode: null })))
    const ended = yield* command.exit.pipe(
      Effect.onInterrupt(() => command.kill),
      Effect.mapError((error) => new GitCommandFailed({ operation, detail: error.message, exitCode: null }))
    )
    if (ended.exitCode === EXIT.noGit) return yield* new GitMissing()
    if (tooLarge) {
      return yield* new GitCommandFailed({
        operation,
        detail: `the bundle is larger than ${MAX_BUNDLE_BYTES / (1024 * 1024)} MiB`,
        exitCode: null
      })
    }
    if (ended.exitCode !== 0) {
      const why = ended.timedOut ? "it did not finish in time" : "git could not make the bundle"
      return yield* new GitCommandFailed({ operation, detail: why, exitCode: ended.exitCode })
    }
    const bundle = new Uint8Array(size)
    let at = 0
    for (const chunk of chunks) {
      bundle.set(chunk, at)
      at += chunk.length
    }
    return bundle
  })

import { type SandboxId, statePaths } from "@prbox/domain"
import { Effect, FileSystem, Option } from "effect"
import type { PlatformError } from "effect/PlatformError"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { Config } from "./Config.ts"
import { HostFailure, hostErrorCode, SetupFailed } from "./Errors.ts"

/** Used when the workspace belongs to root: a sandbox never runs as root. */
const FALLBACK_UID = 1000

export interface SandboxUser {
  readonly uid: number
  readonly gid: number
}

/** `uid:gid`, as a container's user. */
export const userSpec = (user: SandboxUser): string => `${user.uid}:${user.gid}`

/** A host I/O failure as a reason the row can keep: what failed and the errno code. */
const failed = (operation: string) => (error: PlatformError) =>
  new HostFailure({ operation, detail: hostErrorCode(error) })

/**
 * Who a sandbox runs as and what it owns on the host: its workspace and its
 * home directory under `$PRBOX_HOME/homes`.
 */
export const makeOwnership = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const paths = statePaths((yield* Config).home)

  /**
   * Hands a workspace to the sandbox user. Files with more than one link are
   * left alone: they are the object files hardlinked from the shared mirror,
   * and handing them over would let one sandbox rewrite every other's history.
   * (Git never modifies an object file; new objects go into the user's dirs.)
   */
  const chownTree = (path: string, user: SandboxUser) => {
    const refused = new SetupFailed({ reason: "could not hand the workspace to the sandbox user" })
    const find = ChildProcess.make(
      "find",
      ["-P", path, "!", "(", "-type", "f", "-links", "+1", ")", "-exec", "chown", "-h", userSpec(user), "{}", "+"],
      { stdin: "ignore" }
    )
    return spawner.exitCode(find).pipe(
      Effect.mapError(() => refused),
      Effect.flatMap((code) => (code === 0 ? Effect.void : Effect.fail(refused)))
    )
  }

  const ownerOf = (workspacePath: string) =>
    Effect.map(fs.stat(workspacePath).pipe(Effect.mapError(failed("read the workspace"))), (info) => ({
      uid: Option.getOrElse(info.uid, () => 0),
      gid: Option.getOrElse(info.gid, () => 0)
    }))

  /** The user a sandbox runs as: the workspace's owner, never root. */
  const workspaceUser = Effect.fn("Ownership.workspaceUser")(function* (workspacePath: string) {
    const owner = yield* ownerOf(workspacePath)
    return owner.uid === 0 ? { uid: FALLBACK_UID, gid: FALLBACK_UID } : owner
  })

  /**
   * A root-owned workspace (a daemon running as root) is handed to a fixed
   * non-root user; the sandbox's home directory belongs to the same user.
   */
  const prepare = Effect.fn("Ownership.prepare")(function* (id: SandboxId, workspacePath: string) {
    const owner = yield* ownerOf(workspacePath)
    const user = yield* workspaceUser(workspacePath)
    if (owner.uid !== user.uid) yield* chownTree(workspacePath, user)
    const home = paths.sandboxHome(id)
    yield* fs
      .makeDirectory(home, { recursive: true, mode: 0o700 })
      .pipe(Effect.andThen(fs.chown(home, user.uid, user.gid)), Effect.mapError(failed("create the sandbox home")))
  })

  /**
   * Hands what the daemon wrote into a workspace (git run by an update) back
   * to the sandbox user; the mirror's hardlinked objects stay as they are.
   */
  const handBack = Effect.fn("Ownership.handBack")(function* (workspacePath: string) {
    yield* chownTree(workspacePath, yield* workspaceUser(workspacePath))
  })

  return { workspaceUser, prepare, handBack, homeOf: paths.sandboxHome }
})

export type Ownership = Effect.Success<typeof makeOwnership>

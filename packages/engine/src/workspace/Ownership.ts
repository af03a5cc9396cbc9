import { type SandboxFolders, type SandboxId, sandboxFolders, statePaths } from "@prbox/domain"
import { NodeGit } from "@prbox/git"
import { Context, Effect, FileSystem, Layer } from "effect"
import type { PlatformError } from "effect/PlatformError"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { Config } from "../Config.ts"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { daemonSandboxUser, type SandboxUser, userFor, userSpec } from "../ContainerSpec.ts"
import { HostFailure, hostErrorCode, SetupFailed } from "../Errors.ts"

/** find's test for a file the workspace may share with anything else: more than one link. */
const NOT_SHARED = ["!", "(", "-type", "f", "-links", "+1", ")"]

/** A host I/O failure as a reason the row can keep: what failed and the errno code. */
const failed = (operation: string) => (error: PlatformError) =>
  new HostFailure({ operation, detail: hostErrorCode(error) })

/**
 * Removes a sandbox's folders once no container of it runs. A sealed folder
 * this machine cannot remove is cleared by the engine: a daemon that is not
 * root can neither enter it nor remove what root in the container left
 * there, and a removal by path fails on a tree deeper than a path may be.
 * Links in them are removed, never followed.
 */
export const removeSandboxFolders = Effect.fn("Ownership.removeFolders")(function* <E>(
  fs: FileSystem.FileSystem,
  folders: SandboxFolders,
  runtime: Effect.Effect<ContainerRuntimeShape, E>,
  labels: Readonly<Record<string, string>>
) {
  const remove = (path: string, what: string) =>
    fs.remove(path, { recursive: true, force: true }).pipe(Effect.mapError(failed(`remove ${what}`)))
  if (folders.sealed === undefined) {
    yield* remove(folders.workspace, "the workspace")
    yield* remove(folders.home, "the sandbox home")
    return
  }
  // Only a folder holds a sealed folder: anything else there (a stray file) is removed as it is.
  const root = yield* fs.stat(folders.root).pipe(
    Effect.map((info) => info.type),
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(undefined)),
    Effect.mapError(failed("read the sandbox's folder"))
  )
  const present =
    root === "Directory" &&
    (yield* fs.exists(folders.sealed).pipe(Effect.mapError(failed("read the sandbox's folder"))))
  const removed = yield* Effect.result(remove(folders.root, "the sandbox's folder"))
  if (removed._tag === "Success") return
  if (!present) return yield* Effect.fail(removed.failure)
  // What this machine could not remove (root's, or a tree deeper than a path may be), the engine
  // clears: as root, by handles, no link followed. Only then: an engine need not be asked otherwise.
  yield* (yield* runtime).clearFolder(folders.root, "sealed", labels)
  yield* remove(folders.root, "the sandbox's folder")
})

/**
 * Who a sandbox runs as and what it owns on the host: its workspace and its
 * home, in its sealed folder (`$PRBOX_HOME/sandboxes/<id>/sealed`).
 */
const make = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const paths = statePaths((yield* Config).home)

  /**
   * Hands a workspace to the sandbox user. Files with more than one link are
   * left alone: clones copy the mirror's objects (`--no-hardlinks`), so one
   * would be an inode shared with something else, and handing it over would
   * let the sandbox rewrite that too.
   * The workspace's own folder goes last: its owner says the hand-over
   * finished, so one cut short (a stop, a crash) is done again.
   */
  const chownTree = (path: string, user: SandboxUser) => {
    const refused = new SetupFailed({ reason: "could not hand the workspace to the sandbox user" })
    const find = ChildProcess.make(
      "find",
      ["-P", path, "-mindepth", "1", ...NOT_SHARED, "-exec", "chown", "-h", userSpec(user), "{}", "+"],
      { stdin: "ignore" }
    )
    return spawner.exitCode(find).pipe(
      Effect.mapError(() => refused),
      Effect.flatMap((code) => (code === 0 ? Effect.void : Effect.fail(refused))),
      Effect.andThen(fs.chown(path, user.uid, user.gid).pipe(Effect.mapError(() => refused)))
    )
  }

  /**
   * Who a root daemon makes new workspaces for: the sandbox user, whose git
   * writes the checkout (NodeGit.asUserCommand: a mount namespace, setpriv),
   * so that no walk hands it over afterwards. Undefined when the daemon is
   * not root, or cannot do that here (no mount namespaces in a container
   * without CAP_SYS_ADMIN, no util-linux): `handOverCheckout`'s walk then does it.
   * Tried once a daemon.
   */
  const newWorkspaceOwner = yield* Effect.cached(
    Effect.gen(function* () {
      if (process.platform !== "linux" || process.getuid?.() !== 0) return undefined
      const user = userFor({ uid: 0, gid: 0 })
      const [program, args] = NodeGit.asUserCommand(user, "/", ["true"])
      const code = yield* spawner
        .exitCode(ChildProcess.make(program, args, { stdin: "ignore", stdout: "ignore", stderr: "ignore" }))
        .pipe(Effect.orElseSucceed(() => -1))
      return code === 0 ? user : undefined
    })
  )

  const daemonUid = process.getuid?.() ?? 0
  const sandboxUser = daemonSandboxUser()
  /** Whether what the daemon writes for a sandbox is handed to the sandbox user (a root daemon's). */
  const handedOver = sandboxUser.uid !== daemonUid

  /** The sandbox's folders, where its row says its workspace is (domain `sandboxFolders`). */
  const foldersOf = (id: SandboxId, workspacePath: string | null) => sandboxFolders(paths, id, workspacePath)

  /**
   * The sandbox's folders are there (a start on a missing one fails with
   * this reason, not Docker's): a look at the folder that holds them, never
   * inside it.
   */
  const requireFolders = (folders: SandboxFolders) =>
    Effect.asVoid(fs.stat(folders.sealed ?? folders.workspace).pipe(Effect.mapError(failed("read the workspace"))))

  /** A folder of this machine made for a sandbox, then the sandbox user's. */
  const sandboxUsersFolder = (
    path: string,
    options: { readonly recursive?: boolean; readonly mode: number },
    operation: string
  ) =>
    fs
      .makeDirectory(path, options)
      .pipe(Effect.andThen(fs.chown(path, sandboxUser.uid, sandboxUser.gid)), Effect.mapError(failed(operation)))

  /**
   * Makes a new sandbox's sealed folder (0700: a root daemon's is sealed
   * from the start) and its home in it, owned by the sandbox user. Only
   * before any container of the sandbox has run; a sandbox of the old
   * layout gets its home made again at every start, as it always did.
   */
  const makeFolders = Effect.fn("Ownership.makeFolders")(function* (folders: SandboxFolders) {
    if (folders.sealed !== undefined) {
      yield* fs
        .makeDirectory(folders.sealed, { recursive: true, mode: 0o700 })
        .pipe(Effect.mapError(failed("create the sandbox's folder")))
    }
    yield* sandboxUsersFolder(folders.home, { recursive: true, mode: 0o700 }, "create the sandbox home")
  })

  /** A new sandbox's empty workspace folder, the sandbox user's: its files are copied in once its container started. */
  const makeWorkspaceFolder = Effect.fn("Ownership.makeWorkspaceFolder")(function* (workspace: string) {
    yield* sandboxUsersFolder(workspace, { mode: 0o755 }, "create the sandbox's workspace")
  })

  /**
   * The sandbox's folder of SSH sockets (0711: the container's user, whoever
   * it is, reaches a socket it is told the name of; read-only in the
   * container, so nothing of its own goes there), made if missing before
   * each new container; undefined for the old layout.
   */
  const makeSockets = Effect.fn("Ownership.makeSockets")(function* (folders: SandboxFolders) {
    const sockets = folders.sockets
    if (sockets === undefined) return undefined
    yield* fs
      .makeDirectory(sockets, { recursive: true })
      .pipe(Effect.andThen(fs.chmod(sockets, 0o711)), Effect.mapError(failed("create the sandbox's ssh folder")))
    return sockets
  })

  /** Whether the sealed folder is root's and 0700: only root (the daemon, or the engine for it) made it so. */
  const isSealed = (sealed: string) =>
    fs.stat(sealed).pipe(
      Effect.map((info) => info.uid._tag === "Some" && info.uid.value === 0 && (info.mode & 0o7777) === 0o700),
      Effect.mapError(failed("read the sandbox's folder"))
    )

  /**
   * Closes the sealed folder before a container of the sandbox starts:
   * root's, 0700. Whatever root in the container leaves in the workspace
   * or the home (a setuid shell, files of other users) is then out of
   * every host user's reach but root's, a non-root daemon's user included.
   * A daemon that is not root has the engine do it; the result is checked.
   */
  const seal = Effect.fn("Ownership.seal")(function* (
    folders: SandboxFolders,
    runtime: ContainerRuntimeShape,
    labels: Readonly<Record<string, string>>
  ) {
    const sealed = folders.sealed
    if (sealed === undefined || (yield* isSealed(sealed))) return
    if (daemonUid === 0) yield* fs.chmod(sealed, 0o700).pipe(Effect.mapError(failed("seal the sandbox's folder")))
    else yield* runtime.sealFolder(folders.root, "sealed", labels)
    if (!(yield* isSealed(sealed))) {
      return yield* new SetupFailed({ reason: "the sandbox's folder could not be sealed (root's, 0700)" })
    }
  })

  /**
   * Hands the files the daemon checked out into a new workspace, as `owner`
   * (undefined: as itself), to the sandbox user: a walk, needed only when a
   * root daemon could not check them out as that user. Only before any
   * container of the sandbox has run: one could swap a folder for a link
   * under the walk.
   */
  const handOverCheckout = (workspacePath: string, owner: SandboxUser | undefined) =>
    handedOver && owner === undefined ? chownTree(workspacePath, sandboxUser) : Effect.void

  return {
    sandboxUser,
    handedOver,
    handOverCheckout,
    newWorkspaceOwner,
    foldersOf,
    requireFolders,
    makeFolders,
    makeWorkspaceFolder,
    makeSockets,
    seal
  }
})

export class Ownership extends Context.Service<Ownership, Effect.Success<typeof make>>()("prbox/engine/Ownership") {
  static readonly layer = Layer.effect(Ownership, make)
}

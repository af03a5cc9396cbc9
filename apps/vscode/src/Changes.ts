import type { ChangedFile } from "@prbox/domain"
import type { Daemon } from "./Daemon.ts"
import { CommandId } from "./Model.ts"
import type { SandboxId } from "./Protocol.ts"
import type { HandlerContext } from "./Target.ts"
import type { DiffSide } from "./Ui.ts"

/**
 * The PR's changes in the editor: its changed files, listed once per head
 * commit, and one file's diff view, whose two sides (the merge-base's and
 * the head's) the daemon reads from its mirror, never from the workspace.
 */

/** The scheme of a diff view's sides: `prbox-pr:/<path>?id=<sandbox>&side=<base|head>`. */
export const PR_FILE_SCHEME = "prbox-pr"

/** A side's URI parts: the file's path (so the editor picks its language) and what to read in the query. */
export const sideUri = (side: DiffSide) => ({
  scheme: PR_FILE_SCHEME,
  path: `/${side.path}`,
  query: new URLSearchParams({ id: side.sandboxId, side: side.side }).toString()
})

/** The side a URI names; undefined for anything this extension did not make. */
export const parseSideUri = (path: string, query: string): DiffSide | undefined => {
  const params = new URLSearchParams(query)
  const id = params.get("id")
  const side = params.get("side")
  if (id === null || !/^[a-z0-9]{12}$/.test(id) || (side !== "base" && side !== "head") || !path.startsWith("/")) {
    return undefined
  }
  return { sandboxId: id as SandboxId, side, path: path.slice(1) }
}

/** A side's text for the diff editor: empty where the file is absent (added or deleted), a line for a binary file. */
export const sideText = async (daemon: Daemon, side: DiffSide): Promise<string> => {
  const file = await daemon.call((client) =>
    client.pullRequestFile(side.sandboxId, { side: side.side, path: side.path })
  )
  return file.binary ? "(a binary file: not shown)\n" : file.content
}

/** The two sides of a changed file: a renamed or copied file's base is its previous path. */
export const diffSides = (sandboxId: SandboxId, file: ChangedFile) => ({
  left: { sandboxId, side: "base" as const, path: file.previousPath ?? file.path },
  right: { sandboxId, side: "head" as const, path: file.path },
  title: `${file.path.slice(file.path.lastIndexOf("/") + 1)} (PR: base ↔ head)`
})

/** A changed-file node (the tree passes it): its sandbox and file. */
const changeOf = (argument: unknown): { readonly sandboxId: SandboxId; readonly file: ChangedFile } | undefined => {
  if (typeof argument !== "object" || argument === null || !("kind" in argument) || argument.kind !== "file") {
    return undefined
  }
  return "sandboxId" in argument && "file" in argument
    ? (argument as { readonly sandboxId: SandboxId; readonly file: ChangedFile })
    : undefined
}

/** The PR's changed files of a sandbox, asked once per head commit (a failed answer is asked again). */
export class ChangedFiles {
  readonly #daemon: Daemon
  readonly #known = new Map<string, Promise<ReadonlyArray<ChangedFile>>>()

  constructor(daemon: Daemon) {
    this.#daemon = daemon
  }

  list(sandboxId: SandboxId, headCommit: string | null): Promise<ReadonlyArray<ChangedFile>> {
    const key = `${sandboxId}@${headCommit ?? ""}`
    const known = this.#known.get(key)
    if (known !== undefined) return known
    const asked = this.#daemon
      .call((client) => client.diff(sandboxId, { against: "base", stat: true, maxBytes: 1 }))
      .then((result) => result.files ?? [])
    this.#known.set(key, asked)
    asked.catch(() => this.#known.delete(key))
    return asked
  }
}

export const changeHandlers = ({ ui }: HandlerContext) => ({
  [CommandId.openChange]: async (argument?: unknown) => {
    const change = changeOf(argument)
    if (change === undefined) {
      ui.error("Pick a file under a sandbox's Changed Files to see its diff.")
      return
    }
    const { left, right, title } = diffSides(change.sandboxId, change.file)
    await ui.diff(left, right, title)
  }
})

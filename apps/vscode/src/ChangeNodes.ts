import type { ChangedFile, ChangeKind } from "@prbox/domain"
import { terminalSafe } from "@prbox/domain"
import type { ChangedFileNode, ChangesNode, Icon, NoteNode } from "./Model.ts"
import type { SandboxId } from "./Protocol.ts"

/** The PR's changed files as the tree shows them; a diff view opens from each. */

/** More files than this are left to `prbox diff --base --stat`: a tree of thousands helps no one. */
export const CHANGES_SHOWN = 300

export const changesNode = (sandboxId: SandboxId): ChangesNode => ({
  kind: "changes",
  id: `${sandboxId}/changes`,
  sandboxId,
  label: "Changed Files",
  tooltip: "The PR's own changes: its head against the merge-base with its base branch",
  icon: { id: "diff" }
})

const changeIcons: Readonly<Record<ChangeKind, Icon>> = {
  added: { id: "diff-added", color: "gitDecoration.addedResourceForeground" },
  modified: { id: "diff-modified", color: "gitDecoration.modifiedResourceForeground" },
  deleted: { id: "diff-removed", color: "gitDecoration.deletedResourceForeground" },
  renamed: { id: "diff-renamed", color: "gitDecoration.renamedResourceForeground" },
  copied: { id: "diff-added", color: "gitDecoration.addedResourceForeground" },
  "type-changed": { id: "diff-modified", color: "gitDecoration.modifiedResourceForeground" }
}

const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1)
const folderOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "")

/** `src/app.ts` as `app.ts` described by `src`, as VS Code's own source control view shows a file. */
export const changedFileNode = (sandboxId: SandboxId, file: ChangedFile): ChangedFileNode => {
  // Paths are the PR's: shown, never interpreted, and made safe to show.
  const path = terminalSafe(file.path)
  const from = file.previousPath === undefined ? undefined : terminalSafe(file.previousPath)
  return {
    kind: "file",
    id: `${sandboxId}/change/${file.path}`,
    sandboxId,
    file,
    label: baseName(path),
    description: [folderOf(path), from === undefined ? undefined : `← ${from}`].filter((part) => part).join(" "),
    tooltip: `${path} (${file.change}${from === undefined ? "" : ` from ${from}`})`,
    icon: changeIcons[file.change],
    contextValue: `change.${file.change}`
  }
}

/** The list under "Changed Files": the files, a note when there are none, or when only the first are shown. */
export const changedFileNodes = (
  sandboxId: SandboxId,
  files: ReadonlyArray<ChangedFile>
): Array<ChangedFileNode | NoteNode> => {
  if (files.length === 0) {
    return [{ kind: "note", id: `${sandboxId}/no-changes`, label: "No changes", tooltip: "", icon: { id: "info" } }]
  }
  const shown = files.slice(0, CHANGES_SHOWN).map((file) => changedFileNode(sandboxId, file))
  if (files.length <= CHANGES_SHOWN) return shown
  return [
    ...shown,
    {
      kind: "note",
      id: `${sandboxId}/more-changes`,
      label: `${files.length - CHANGES_SHOWN} more files`,
      tooltip: `prbox diff ${sandboxId} --base --stat lists them all`,
      icon: { id: "ellipsis" }
    }
  ]
}

/** Why the list could not be had, under "Changed Files". */
export const changesUnavailable = (sandboxId: SandboxId, message: string): NoteNode => ({
  kind: "note",
  id: `${sandboxId}/changes-unavailable`,
  label: "Changes unavailable",
  tooltip: terminalSafe(message),
  icon: { id: "warning" }
})

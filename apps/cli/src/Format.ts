// Modules, not the packages' indexes: the fast path (QuickAnswer.ts) formats with these without loading effect.
import { age, environmentOf, legacyWarning, repoOf, setupFailureOf } from "@prbox/client/Format"
import { isLive } from "@prbox/domain/Vocabulary"
import type { SandboxView } from "@prbox/protocol"

export const urlOf = (view: SandboxView): string => (view.status === "running" && view.url !== null ? view.url : "-")

/** Left-aligned columns separated by two spaces. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

/** The status with what needs the user: a destroy to retry, a setup to fix, a legacy row to delete. */
const statusCell = (view: SandboxView): string => {
  const marks = [
    view.destroyFenced ? "fenced" : undefined,
    setupFailureOf(view) === null ? undefined : "setup failed",
    view.hasPassword ? undefined : "legacy"
  ].filter((mark) => mark !== undefined)
  return marks.length === 0 ? view.status : `${view.status} (${marks.join(", ")})`
}

/** `prbox status`'s setup line: the reason and where its output is. */
export const setupLine = (view: SandboxView): string | null => {
  const failure = setupFailureOf(view)
  return failure === null ? null : `${failure}; its output: \`prbox logs ${view.id}\``
}

/** One `warning:` line per legacy row of the list, saying what to do. */
export const legacyNotes = (views: ReadonlyArray<SandboxView>): ReadonlyArray<string> =>
  views.flatMap((view) => {
    const warning = legacyWarning(view)
    return warning === undefined ? [] : [`warning: ${warning}`]
  })

export const sandboxTable = (views: ReadonlyArray<SandboxView>, now: number): string =>
  table(
    ["ID", "PR", "REPO", "STATUS", "ENV", "AGE", "URL"],
    views.map((view) => [
      view.id,
      `#${view.pullRequest}`,
      repoOf(view),
      statusCell(view),
      view.environment?.kind ?? "-",
      age(view.createdAt, now),
      urlOf(view)
    ])
  )

/**
 * `prbox ls [-a]`'s text from the full list: live rows (or all with `-a`),
 * and always the legacy rows without a password (they have ended, but block
 * their PR until deleted), with what to do about them.
 */
export const listText = (all: ReadonlyArray<SandboxView>, showAll: boolean, now: number): string => {
  const views = showAll ? all : all.filter((view) => isLive(view) || !view.hasPassword)
  if (views.length === 0) return showAll ? "no sandboxes" : "no active sandboxes (prbox ls -a shows all)"
  return [sandboxTable(views, now), ...legacyNotes(views)].join("\n")
}

/** `prbox status`: one sandbox, one field per line. */
export const describe = (view: SandboxView, now: number): string => {
  const fields: Array<[string, string | null]> = [
    ["id", view.id],
    ["pull request", `${repoOf(view)}#${view.pullRequest}`],
    ["status", view.destroyFenced ? `${view.status} (fenced: run \`prbox rm ${view.id}\`)` : view.status],
    ["warning", legacyWarning(view) ?? null],
    ["url", urlOf(view)],
    ["password", view.hasPassword ? `prbox password ${view.id}` : "none (legacy sandbox)"],
    ["branch", view.sourceBranch],
    ["commit", view.sourceCommit],
    ["workspace", view.workspacePath],
    ["environment", view.environment === null ? null : environmentOf(view)],
    [
      "image",
      view.environment === null
        ? null
        : `${view.environment.image}${view.environment.imageDigest === null ? "" : ` (${view.environment.imageDigest.slice(0, 19)})`}`
    ],
    ["container", view.containerId === null ? null : view.containerId.slice(0, 12)],
    ["detail", view.detail],
    ["error", view.error],
    ["setup", setupLine(view)],
    ["created", `${age(view.createdAt, now)} ago`],
    ["last activity", `${age(view.lastActivityAt, now)} ago`]
  ]
  return fields
    .filter((entry): entry is [string, string] => entry[1] !== null)
    .map(([name, value]) => `${`${name}:`.padEnd(15)}${value}`)
    .join("\n")
}

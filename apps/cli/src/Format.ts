// Modules, not the packages' indexes: the fast path (QuickAnswer.ts) formats with these without loading effect.
import {
  age,
  displayText,
  environmentOf,
  legacyWarning,
  markEnded,
  pullRequestStateText,
  pullRequestTitle,
  repoOf,
  setupFailureOf
} from "@prbox/client/Format"
import { isLive } from "@prbox/domain/Vocabulary"
import type { PoolList, SandboxView } from "@prbox/protocol"
import { fitWidth } from "./TextWidth.ts"

export const urlOf = (view: SandboxView): string => (view.status === "running" && view.url !== null ? view.url : "-")

/** The columns stdout has when it is a terminal; undefined when it is not (a pipe or a file gets whole lines). */
export const terminalColumns = (stdout: { readonly isTTY?: boolean; readonly columns?: number }): number | undefined =>
  stdout.isTTY === true && stdout.columns !== undefined && stdout.columns > 0 ? stdout.columns : undefined

/** The least a cut last column keeps, however narrow the terminal: past that the lines wrap. */
const LAST_COLUMN_MIN = 12

/**
 * Left-aligned columns separated by two spaces. With `columns`, the last
 * column's cells are cut with "…" so that each line fits in that many
 * (keeping LAST_COLUMN_MIN at least).
 */
export const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  columns?: number
): string => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)))
  const lastStart = widths.slice(0, -1).reduce((sum, width) => sum + width + 2, 0)
  const lastWidth = columns === undefined ? undefined : Math.max(LAST_COLUMN_MIN, columns - lastStart)
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) =>
        column < cells.length - 1
          ? cell.padEnd(widths[column] ?? 0)
          : lastWidth === undefined
            ? cell
            : fitWidth(cell, lastWidth)
      )
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

/**
 * The status with what needs the user (a destroy to retry, a setup to fix, a
 * legacy row to delete), then whether the PR was merged or closed:
 * `running (setup failed) · merged`.
 */
const statusCell = (view: SandboxView): string => {
  const marks = [
    view.destroyFenced ? "fenced" : undefined,
    setupFailureOf(view) === null ? undefined : "setup failed",
    view.hasPassword ? undefined : "legacy"
  ].filter((mark) => mark !== undefined)
  return markEnded(marks.length === 0 ? view.status : `${view.status} (${marks.join(", ")})`, view)
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

/** The table of `prbox ls`; TITLE last, cut to fit `columns` when given (a terminal's width). */
export const sandboxTable = (views: ReadonlyArray<SandboxView>, now: number, columns?: number): string =>
  table(
    ["ID", "PR", "REPO", "STATUS", "ENV", "AGE", "URL", "TITLE"],
    views.map((view) => [
      view.id,
      `#${view.pullRequest}`,
      repoOf(view),
      statusCell(view),
      view.environment?.kind ?? "-",
      age(view.createdAt, now),
      urlOf(view),
      pullRequestTitle(view) ?? "—"
    ]),
    columns
  )

/**
 * `prbox ls [-a]`'s text from the full list: live rows (or all with `-a`),
 * and always the legacy rows without a password (they have ended, but block
 * their PR until deleted), with what to do about them. `columns`: the
 * terminal's width, which the titles are cut to fit.
 */
export const listText = (all: ReadonlyArray<SandboxView>, showAll: boolean, now: number, columns?: number): string => {
  const views = showAll ? all : all.filter((view) => isLive(view) || !view.hasPassword)
  if (views.length === 0) return showAll ? "no sandboxes" : "no active sandboxes (prbox ls -a shows all)"
  return [sandboxTable(views, now, columns), ...legacyNotes(views)].join("\n")
}

/** `prbox status`: one sandbox, one field per line. */
export const describe = (view: SandboxView, now: number): string => {
  const fields: Array<[string, string | null]> = [
    ["id", view.id],
    ["pull request", `${repoOf(view)}#${view.pullRequest}`],
    ["title", pullRequestTitle(view)],
    ["author", view.author === null ? null : displayText(view.author)],
    ["PR state", pullRequestStateText(view, now)],
    ["base branch", view.baseRef === null ? null : displayText(view.baseRef)],
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
    // What the PR's configuration asked for and did not get, one line each.
    ...(view.environment?.ignored ?? []).map((left): [string, string] => [
      "left out",
      displayText(`${left.property}: ${left.detail}`)
    ]),
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

/** `prbox ls --pool`'s text: the warm pool's containers, never a password. */
export const poolText = (entries: PoolList, now: number): string =>
  entries.length === 0
    ? "the warm pool is empty"
    : table(
        ["ID", "REPO", "KEY", "STATE", "AGE", "PORT"],
        entries.map((entry) => [
          entry.id,
          `${entry.host}/${entry.repository}`,
          entry.keyPrefix,
          entry.state,
          age(entry.createdAt, now),
          entry.port === null ? "-" : String(entry.port)
        ])
      )

import type { PushCommit, PushReport } from "@prbox/protocol"

/** Why a push did not happen, as `--json` and `sandbox_push` give it. */
export interface PushRefusal {
  readonly kind: string
  readonly reason: string
  readonly changedFiles?: ReadonlyArray<string>
}

/**
 * What `prbox push --json` prints and MCP's `sandbox_push` returns: the
 * commits shown, whether they were pushed, and the refusal when there was one.
 */
export interface PushResult {
  readonly sandbox: string
  readonly remote: string | null
  readonly branch: string | null
  readonly head: string | null
  readonly tip: string | null
  readonly commits: ReadonlyArray<PushCommit>
  readonly pushed: boolean
  readonly refused: PushRefusal | null
}

export const pushResult = (report: PushReport): PushResult => ({
  sandbox: report.sandbox.id,
  remote: report.remote,
  branch: report.branch,
  head: report.head,
  tip: report.tip,
  commits: report.commits,
  pushed: report.pushed,
  refused: null
})

/** A refusal as a result: the commits of the preview that came before it, if any. */
export const refusedResult = (sandbox: string, refusal: PushRefusal, shown?: PushReport): PushResult => ({
  ...(shown === undefined
    ? { sandbox, remote: null, branch: null, head: null, tip: null, commits: [] }
    : pushResult(shown)),
  pushed: false,
  refused: refusal
})

const short = (commit: string) => commit.slice(0, 7)

/** The commits shown before a push: one line each, their files under them (the caller makes the text terminal-safe). */
export const pushLines = (report: PushReport): ReadonlyArray<string> => [
  `${report.commits.length} commit(s) on ${short(report.head)}, to push to ${report.branch} of ${report.remote}:`,
  ...report.commits.flatMap((commit) => [
    `  ${short(commit.commit)} ${commit.subject} (${commit.author})`,
    ...commit.files.map((file) => `      ${file}`)
  ])
]

import { basename } from "node:path"
import { portKey } from "@prbox/domain/PortKey"
import type { PortList, PortView, SandboxView } from "@prbox/protocol"

/** `42s`, `5m`, `3h`, `2d`. */
export const age = (since: number, now: number): string => {
  const seconds = Math.max(0, Math.floor((now - since) / 1000))
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`
  return `${Math.floor(seconds / 86_400)}d`
}

/**
 * The repository as a user types it: `owner/repo` on github.com (as in
 * `owner/repo#N`), `host/owner/repo` elsewhere, a local remote by its
 * directory name.
 */
export const repoOf = (view: Pick<SandboxView, "host" | "repository">): string => {
  if (view.host === null || view.host === "github.com") return view.repository
  if (view.host === "local") return basename(view.repository).replace(/\.git$/, "") || view.repository
  return `${view.host}/${view.repository}`
}

/**
 * Why the sandbox's setup stopped early, once it runs (or is stopped): the
 * setup ended there, the sandbox did not. Null while a create or restart is
 * under way (a setup in progress is not yet a failure) or when it succeeded.
 */
export const setupFailureOf = (view: Pick<SandboxView, "status" | "setupError">): string | null =>
  view.status === "running" || view.status === "stopped" ? view.setupError : null

/**
 * What the user has to do about a row schema v1 wrote without an access
 * password (such a row is stopped and blocks its PR until it is removed),
 * or undefined for any other row.
 */
export const legacyWarning = (view: Pick<SandboxView, "id" | "hasPassword">): string | undefined =>
  view.hasPassword
    ? undefined
    : `legacy sandbox without a password: delete it with \`prbox rm ${view.id}\` and open the PR again`

/**
 * Which environment a sandbox got, in a few words: `devcontainer (.devcontainer/devcontainer.json)`,
 * `config (image)`, `default`; "-" before it is known.
 */
export const environmentOf = (view: Pick<SandboxView, "environment">): string => {
  const environment = view.environment
  if (environment === null) return "-"
  if (environment.kind === "devcontainer") return `devcontainer (${environment.path ?? "devcontainer.json"})`
  return environment.kind === "config" ? `config (${environment.image})` : "default"
}

/**
 * Text a hosting service wrote (a PR's title, its author), safe to show: a
 * title is the PR author's to choose, so control characters (an escape
 * sequence would drive the user's terminal, a newline would break a table)
 * become spaces, bidirectional overrides (which reorder what is shown) are
 * dropped, and runs of blanks become one space.
 */
export const displayText = (text: string): string =>
  text
    .replace(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/gu, "")
    .replace(/[\p{Cc}\u2028\u2029\s]+/gu, " ")
    .trim()

/** The PR's title as the hosting service last gave it, safe to show; null when unknown (or blank). */
export const pullRequestTitle = (view: Pick<SandboxView, "title">): string | null => {
  const title = view.title === null ? "" : displayText(view.title)
  return title === "" ? null : title
}

/**
 * A sandbox's status text with ` · merged` or ` · closed` when the hosting
 * service last said so (a sandbox whose review is over); as it is otherwise.
 */
export const markEnded = (status: string, view: Pick<SandboxView, "pullRequestState">): string =>
  view.pullRequestState === "merged" || view.pullRequestState === "closed"
    ? `${status} · ${view.pullRequestState}`
    : status

/** `merged (first seen 3h ago)`, `open`: the PR's state as the hosting service last said it; null when unknown. */
export const pullRequestStateText = (
  view: Pick<SandboxView, "pullRequestState" | "closedSeenAt">,
  now: number
): string | null => {
  if (view.pullRequestState === null) return null
  return view.closedSeenAt === null
    ? view.pullRequestState
    : `${view.pullRequestState} (first seen ${age(view.closedSeenAt, now)} ago)`
}

/** Who may open a port's preview: anyone (`public`), or who has the password or the token (`private`). */
export const accessOf = (port: Pick<PortView, "public">): string => (port.public ? "public" : "private")

/** `3000 (web)`, or the bare number when the port has no label; another Compose service's is `db:5432`. */
export const portName = (port: Pick<PortView, "port" | "label" | "service">): string =>
  port.label === null ? portKey(port.port, port.service) : `${portKey(port.port, port.service)} (${port.label})`

/** `prbox ports`'s columns: PORT LABEL SOURCE LISTENING ACCESS URL. */
export const PORTS_HEADER = ["PORT", "LABEL", "SOURCE", "LISTENING", "ACCESS", "URL"] as const

export const portRows = (list: PortList): ReadonlyArray<ReadonlyArray<string>> =>
  list.ports.map((port) => [
    portKey(port.port, port.service),
    port.label ?? "-",
    port.source,
    port.listening ? "yes" : "no",
    accessOf(port),
    port.url
  ])

/** The ports listening in `list`, by `portKey`. */
const listening = (list: PortList): ReadonlyMap<string, PortView> =>
  new Map(list.ports.filter((port) => port.listening).map((port) => [portKey(port.port, port.service), port]))

/** The container's own ports first, then each service's, each ascending. */
const byServiceThenPort = (a: PortView, b: PortView): number =>
  (a.service ?? "").localeCompare(b.service ?? "") || a.port - b.port

/**
 * `prbox ports -w`: one line per port that started or stopped listening
 * between two lists (the container's own ascending, then other services';
 * a port that left the list stopped).
 */
export const portChanges = (before: PortList, after: PortList): ReadonlyArray<string> => {
  const was = listening(before)
  const now = listening(after)
  const keys = new Set([...was.keys(), ...now.keys()])
  const ports = [...keys].flatMap((key) => [now.get(key) ?? was.get(key) ?? []].flat()).sort(byServiceThenPort)
  return ports.flatMap((port) => {
    const key = portKey(port.port, port.service)
    const started = now.get(key)
    if (started !== undefined) {
      return was.has(key) ? [] : [`${portName(started)} is listening: ${started.url} (${accessOf(started)})`]
    }
    return [`${portName(port)} stopped listening`]
  })
}

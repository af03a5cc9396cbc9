import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { isAbsolute, join, resolve } from "node:path"
import type { OpenRequest } from "@prbox/protocol"

/** `~/x` is the user's home, like a shell would read it. */
export const expandHome = (path: string): string =>
  path === "~" ? homedir() : path.startsWith("~/") ? join(homedir(), path.slice(2)) : path

const isUrl = (input: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(input)

/**
 * What is sent as `open`'s input: a URL or `owner/repo#N` as typed; a local
 * path (absolute, or one that exists under `baseDir`) made absolute, since
 * the daemon would read a relative path against its own directory.
 */
export const normalizeOpenInput = (input: string, baseDir: string): string => {
  if (isUrl(input)) return input
  const expanded = expandHome(input)
  const local = resolve(baseDir, expanded)
  return isAbsolute(expanded) || existsSync(local) ? local : input
}

export type ParsedOpen =
  | { readonly _tag: "ok"; readonly request: OpenRequest }
  | { readonly _tag: "invalid"; readonly message: string }

const invalid = (message: string): ParsedOpen => ({ _tag: "invalid", message })

/**
 * What `prbox open` accepts, as one line (the extension's input box): a pull
 * request URL, `owner/repo#N`, or a git URL or path followed by `--pr N`,
 * optionally `--ref REF`.
 */
export const parseOpenInput = (text: string, baseDir: string): ParsedOpen => {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((word) => word.length > 0)
  const positional: Array<string> = []
  let pr: number | undefined
  let ref: string | undefined
  for (let index = 0; index < words.length; index++) {
    const word = words[index] ?? ""
    const flag = /^--(pr|ref)(?:=(.*))?$/.exec(word)
    if (flag === null) {
      positional.push(word)
      continue
    }
    const value = flag[2] ?? words[++index]
    if (value === undefined || value === "") return invalid(`--${flag[1]} needs a value`)
    if (flag[1] === "ref") ref = value
    else if (/^[1-9]\d*$/.test(value)) pr = Number(value)
    else return invalid(`--pr needs a pull request number, not "${value}"`)
  }
  const [input, ...extra] = positional
  if (input === undefined) return invalid("type a pull request URL, owner/repo#N, or a git URL or path with --pr N")
  if (extra.length > 0) return invalid(`one pull request at a time (also got: ${extra.join(" ")})`)
  return { _tag: "ok", request: openRequest(input, baseDir, { pr, ref }) }
}

/** The `open` request for `input` (normalised) with an optional `--pr`, `--ref` and `--devcontainer`. */
export const openRequest = (
  input: string,
  baseDir: string,
  options: {
    readonly pr?: number | undefined
    readonly ref?: string | undefined
    readonly devcontainer?: string | undefined
  } = {}
): OpenRequest => ({
  input: normalizeOpenInput(input, baseDir),
  ...(options.pr === undefined ? {} : { pr: options.pr }),
  ...(options.ref === undefined ? {} : { ref: options.ref }),
  ...(options.devcontainer === undefined ? {} : { devcontainer: options.devcontainer })
})

/** `owner/repo#N`: github.com's shorthand. */
const SHORTHAND = /^[A-Za-z0-9][A-Za-z0-9-]*\/[A-Za-z0-9._-]+#[1-9]\d*$/
/** `[user@]host:path`, git's scp-like form of an ssh remote. */
const SCP_LIKE = /^(?:[^@/:]+@)?(\[[^\]]+\]|[^@/:[]+):(?!\/\/)/
/** Names of this machine a remote's host may use. */
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?|\[?::ffff:127(?:\.\d{1,3}){3}\]?|0\.0\.0\.0|0)$/i

const isLoopback = (host: string): boolean => LOOPBACK.test(host.replace(/\.$/, ""))

/**
 * Whether an open's input (as `openRequest` normalised it) reaches a
 * repository on this machine: a path (absolute, relative, `~`), a `file:`
 * URL, or a remote whose host is this machine. Anything that is not plainly
 * a remote on another host counts as local: the daemon reads a relative
 * path against its own folder.
 */
export const isLocalOpenInput = (input: string): boolean => {
  const text = input.trim()
  if (SHORTHAND.test(text)) return false
  if (/^codecommit::/i.test(text)) return false
  if (/^file:/i.test(text)) return true
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) {
    try {
      const url = new URL(text)
      return url.hostname === "" || isLoopback(url.hostname)
    } catch {
      return true
    }
  }
  const scp = SCP_LIKE.exec(text)
  return scp === null || isLoopback(scp[1] ?? "")
}

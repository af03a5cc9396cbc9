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
/**
 * Names that reach this machine or its own network without a DNS answer: a
 * single label (`localhost`, `ip6-localhost`, a name /etc/hosts or a search
 * domain resolves), `*.localhost` and `localhost.localdomain`.
 */
const LOCAL_NAMES = /^(?:[^.]*|.*\.localhost|localhost\.localdomain)$/

/** IPv4 ranges of this machine and private networks: `[first octets, prefix length]`. */
const LOCAL_V4: ReadonlyArray<readonly [number, number, number]> = [
  [0, 0, 8],
  [10, 0, 8],
  [127, 0, 8],
  [169, 254, 16],
  [172, 16, 12],
  [192, 168, 16],
  [100, 64, 10]
]

const isLocalV4 = (address: string): boolean => {
  const octets = address.split(".").map(Number)
  const value = (((octets[0] ?? 0) << 24) | ((octets[1] ?? 0) << 16) | ((octets[2] ?? 0) << 8) | (octets[3] ?? 0)) >>> 0
  return LOCAL_V4.some(([a, b, prefix]) => {
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0
    return (value & mask) >>> 0 === ((((a << 24) | (b << 16)) >>> 0) & mask) >>> 0
  })
}

/**
 * Whether a remote's host is this machine or its private network, however
 * it is spelled: the URL parser's canonical form (`127.1`, `2130706433`,
 * `0x7f000001` and `0177.0.0.1` are all 127.0.0.1; an IPv4-mapped IPv6
 * address is its IPv4 one), a name of this machine, a single-label name
 * (resolved by this machine's own files or search domains). A name that
 * only DNS says is local is not seen here.
 */
const isLocalHost = (host: string): boolean => {
  const bare = host
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase()
  if (bare === "") return true
  let canonical: string
  try {
    canonical = new URL(`http://${bare.includes(":") ? `[${bare}]` : bare}/`).hostname.replace(/^\[|\]$/g, "")
  } catch {
    return true
  }
  if (/^\d+\.\d+\.\d+\.\d+$/.test(canonical)) return isLocalV4(canonical)
  if (canonical.includes(":")) {
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical)
    if (mapped !== null) {
      const high = Number.parseInt(mapped[1] ?? "0", 16)
      const low = Number.parseInt(mapped[2] ?? "0", 16)
      return isLocalV4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`)
    }
    return canonical === "::" || canonical === "::1" || /^f[cd]/.test(canonical) || /^fe[89ab]/.test(canonical)
  }
  return LOCAL_NAMES.test(canonical)
}

/**
 * Whether an open's input (as `openRequest` normalised it) reaches a
 * repository on this machine: a path (absolute, relative, `~`), a `file:`
 * URL, or a remote whose host is this machine or its private network
 * (`isLocalHost`). Anything that is not plainly
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
      return isLocalHost(url.hostname)
    } catch {
      return true
    }
  }
  const scp = SCP_LIKE.exec(text)
  return scp === null || isLocalHost(scp[1] ?? "")
}

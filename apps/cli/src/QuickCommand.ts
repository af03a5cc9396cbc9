/**
 * The commands the fast path answers (QuickAnswer.ts), decided from argv
 * alone: `ls [-a|--all] [--json]`, `status <id> [--json]`,
 * `open <pull-request> [--pr N] [--json] [--no-wait]` (QuickOpen.ts), each
 * flag at most once, in any order, `ssh-proxy <host>` and `--version`. Anything else (another command, `--pr`, `--help`,
 * a flag effect/cli reads in a way this does not) is undefined: the full CLI
 * runs it. This module imports nothing, so deciding costs nothing.
 */
/** The commands answered from the daemon. */
export type DaemonQuery =
  | { readonly _tag: "ls"; readonly all: boolean; readonly json: boolean }
  | { readonly _tag: "status"; readonly id: string; readonly json: boolean }

/** `prbox open` of a pull request (`--pr`: its number, for a plain git URL or path). */
export interface OpenCommand {
  readonly _tag: "open"
  readonly input: string
  readonly pr: number | undefined
  readonly json: boolean
  readonly wait: boolean
}

/** OpenSSH's ProxyCommand (`ssh-proxy <host>`): started for every new SSH connection. */
export interface SshProxyCommand {
  readonly _tag: "ssh-proxy"
  readonly host: string
}

export type QuickCommand = DaemonQuery | OpenCommand | SshProxyCommand | { readonly _tag: "version" }

/** `--pr`'s value as the full CLI reads it unambiguously: a plain positive number. */
const PR_NUMBER = /^[1-9][0-9]{0,8}$/

/** `open`'s argv: one input, `--pr N` (as two words), `--json`, `--no-wait`; anything else the full CLI's. */
const openCommand = (rest: ReadonlyArray<string>): OpenCommand | undefined => {
  const at = rest.indexOf("--pr")
  const value = at < 0 ? undefined : rest[at + 1]
  if (at >= 0 && (value === undefined || !PR_NUMBER.test(value))) return undefined
  const others = at < 0 ? rest : [...rest.slice(0, at), ...rest.slice(at + 2)]
  const flags = others.filter((word) => word.startsWith("-"))
  const words = others.filter((word) => !word.startsWith("-"))
  const [input] = words
  if (new Set(flags).size !== flags.length || !flags.every((flag) => flag === "--json" || flag === "--no-wait"))
    return undefined
  if (words.length !== 1 || input === undefined || input.trim().length === 0) return undefined
  return {
    _tag: "open",
    input,
    pr: value === undefined ? undefined : Number(value),
    json: flags.includes("--json"),
    wait: !flags.includes("--no-wait")
  }
}

export const quickCommand = (argv: ReadonlyArray<string>): QuickCommand | undefined => {
  const [command, ...rest] = argv
  if (command === "--version" && rest.length === 0) return { _tag: "version" }
  if (command === "open") return openCommand(rest)
  if (command === "ssh-proxy") {
    const [host] = rest
    return rest.length === 1 && host !== undefined && !host.startsWith("-") ? { _tag: "ssh-proxy", host } : undefined
  }
  const flags = rest.filter((word) => word.startsWith("-"))
  const words = rest.filter((word) => !word.startsWith("-"))
  if (new Set(flags).size !== flags.length) return undefined
  const json = flags.includes("--json")
  if (command === "ls") {
    const all = flags.includes("-a") || flags.includes("--all")
    const known = flags.every((flag) => flag === "--json" || flag === "-a" || flag === "--all")
    return known && words.length === 0 && !(flags.includes("-a") && flags.includes("--all"))
      ? { _tag: "ls", all, json }
      : undefined
  }
  if (command === "status") {
    const [id] = words
    return flags.every((flag) => flag === "--json") && words.length === 1 && id !== undefined && id.length > 0
      ? { _tag: "status", id, json }
      : undefined
  }
  return undefined
}

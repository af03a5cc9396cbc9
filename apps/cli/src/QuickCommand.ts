/**
 * The commands the fast path answers (QuickAnswer.ts), decided from argv
 * alone: `ls [-a|--all] [--json]` and `status <id> [--json]`, each flag at
 * most once, in any order, and `--version`. Anything else (another command, `--pr`, `--help`,
 * a flag effect/cli reads in a way this does not) is undefined: the full CLI
 * runs it. This module imports nothing, so deciding costs nothing.
 */
/** The commands answered from the daemon. */
export type DaemonQuery =
  | { readonly _tag: "ls"; readonly all: boolean; readonly json: boolean }
  | { readonly _tag: "status"; readonly id: string; readonly json: boolean }

export type QuickCommand = DaemonQuery | { readonly _tag: "version" }

export const quickCommand = (argv: ReadonlyArray<string>): QuickCommand | undefined => {
  const [command, ...rest] = argv
  if (command === "--version" && rest.length === 0) return { _tag: "version" }
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

/**
 * `userEnvProbe`: the sandbox user's environment as their shell makes it (a
 * login shell's profile, an interactive shell's rc), probed in the container
 * as the devcontainers CLI's `runUserEnvProbe` does
 * (src/spec-common/injectHeadless.ts): the user's shell (`$SHELL`, else
 * their passwd entry's, else /bin/sh) run with `-lic`/`-lc`/`-ic`, printing
 * `/proc/self/environ` (else `printenv`) between two marks, for at most
 * config.json's `userEnvProbeTimeoutSeconds` (the CLI's 10 s). Applied to
 * lifecycle commands (create/UserEnv.ts) and to code-server's own
 * environment (CodeServerLaunch.ts), with `remoteEnv` and prbox's own
 * variables over it. Pure: the exec is the caller's.
 */
import type { UserEnvProbe } from "@prbox/domain"
import { firstThen } from "./RunFirst.ts"

export const PROBE_FLAGS: Readonly<Record<UserEnvProbe, string>> = {
  loginInteractiveShell: "-lic",
  loginShell: "-lc",
  interactiveShell: "-ic"
}

/**
 * Run by /bin/sh as the sandbox user: `$1` the shell's flag, `$2` the mark,
 * `$3` what prints the environment. The container's own PATH comes first,
 * on a line of its own, before any profile could print.
 */
export const PROBE_SCRIPT = [
  `printf 'PATH=%s\\n' "$PATH"`,
  `shell=\${SHELL:-$( (getent passwd "$(id -u)" || grep "^[^:]*:[^:]*:$(id -u):" /etc/passwd) 2>/dev/null | head -n 1 | cut -d: -f7)}`,
  `exec "\${shell:-/bin/sh}" "$1" "printf %s '$2'; $3; printf %s '$2'"`
].join("\n")

/** What prints the environment: NUL-separated, else (no /proc) one variable a line. */
export const PROBE_COMMANDS = [
  { command: "cat /proc/self/environ", separator: "\0" },
  { command: "printenv", separator: "\n" }
] as const

/** The probe's argv for `docker exec`; with `first`, that command's argv run before it in the same exec (RunFirst.ts). */
export const probeArgv = (
  mode: UserEnvProbe,
  mark: string,
  command: string,
  first?: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const { script, args } = firstThen(PROBE_SCRIPT, first)
  return ["/bin/sh", "-c", script, "prbox-probe", ...args, PROBE_FLAGS[mode], mark, command]
}

/** What the exec's stderr says when the probe beside another command was stopped at its bound. */
export const PROBE_TIMED_OUT = "prbox: the probe of the environment timed out"

/**
 * `reap PID`: PID and every process below it stopped, then killed (a
 * parent stopped first cannot fork more; /proc's `pid (comm) state ppid`).
 * The exec's own group is the runtime's to kill; this is the probe's part.
 */
const REAP_SH = [
  `reap() {`,
  `  found=" $1 " more=1`,
  `  kill -STOP "$1" 2>/dev/null`,
  `  while [ -n "$more" ]; do`,
  `    more=`,
  `    for stat in /proc/[0-9]*/stat; do`,
  `      read -r line < "$stat" 2>/dev/null || continue`,
  `      pid=\${line%% *} rest=\${line##*) }`,
  `      rest=\${rest#* }`,
  `      case "$found" in *" $pid "*) continue ;; *" \${rest%% *} "*) found="$found$pid " more=1; kill -STOP "$pid" 2>/dev/null ;; esac`,
  `    done`,
  `  done`,
  `  kill -KILL $found 2>/dev/null`,
  `}`
].join("\n")

/**
 * Run by /bin/sh as the sandbox user: PROBE_SCRIPT (`$1`) in the
 * background, its output to a file of this user's and bounded by a watchdog
 * (`$2` seconds, then the probe and all it started are killed: a shell that
 * waits, or leaves children, never holds the exec), beside `$3`, run as
 * `sh -c` with the exec's stdin, its output on stderr; then the probe's
 * output on stdout, and `$3`'s exit status. `$4` to `$6`: the probe's flag,
 * mark and command; `$7` empty, or a step's mark (below); `$3`'s own
 * arguments after. Without `mktemp` no probe runs (the caller probes in an
 * exec of its own).
 *
 * With a step's mark, a step runs after `$3` in the same exec, with the
 * environment the probe found: the probe's output comes first, then the
 * line `<mark> <state>` on stdout (0: a step can run; 1: the probe was
 * stopped at its bound; 2: no `env` to run one with); the
 * exec's stdin then brings the step (a count of lines, then that many:
 * shell text, stepFrame's; none is no step) and after it `$3`'s own stdin.
 * `$3`'s status follows its output on stderr as `<mark> <status>`; the step
 * runs only when that is 0, and the exec's status is then the step's.
 */
const BESIDE_SCRIPT = [
  REAP_SH,
  `probe=$1 seconds=$2 other=$3 flag=$4 mark=$5 command=$6 step_mark=$7`,
  `shift 7`,
  `out=$(umask 077 && mktemp 2>/dev/null) || out=`,
  `if [ -n "$out" ]; then`,
  `  sh -c "$probe" prbox-probe "$flag" "$mark" "$command" </dev/null >"$out" 2>/dev/null &`,
  `  probing=$!`,
  // The watchdog's sleep is killed with it (a trapped TERM ends `wait`), never left behind.
  `  (trap 'kill "$sleeping" 2>/dev/null; exit 0' TERM; sleep "$seconds" & sleeping=$!; wait "$sleeping" && reap "$probing") </dev/null >/dev/null 2>&1 &`,
  `  watchdog=$!`,
  `fi`,
  `state=0`,
  `probed() {`,
  `  [ -n "$out" ] || return 0`,
  `  wait "$probing" || [ "$?" -ne 137 ] || { state=1; printf '%s\\n' '${PROBE_TIMED_OUT}' >&2; }`,
  `  kill "$watchdog" 2>/dev/null`,
  `  cat "$out"`,
  `  rm -f "$out"`,
  `}`,
  `step=`,
  `if [ -n "$step_mark" ]; then`,
  `  probed`,
  `  command -v env >/dev/null 2>&1 || state=2`,
  `  printf '\\n%s %s\\n' "$step_mark" "$state"`,
  `  IFS= read -r lines || exit 125`,
  `  while [ "$lines" -gt 0 ]; do IFS= read -r line || exit 125; step="$step$line\n"; lines=$((lines - 1)); done`,
  `fi`,
  `sh -c "$other" prbox-beside "$@" >&2`,
  `status=$?`,
  `if [ -z "$step_mark" ]; then`,
  `  probed`,
  `  exit "$status"`,
  `fi`,
  `printf '\\n%s %s\\n' "$step_mark" "$status" >&2`,
  `[ "$status" -eq 0 ] && [ -n "$step" ] || exit "$status"`,
  // As its own exec would: no stdin.
  `eval "$step" </dev/null`
].join("\n")

/**
 * probeArgv with `beside` (a script and its arguments) run in the same
 * exec (BESIDE_SCRIPT): one `docker exec` less beside code-server's start,
 * where each costs its start more than the work it runs. `stepMark`: a
 * step may follow in it, the exec's stdin bringing it (stepFrame) before
 * `beside`'s own.
 */
export const probeBesideArgv = (
  mode: UserEnvProbe,
  mark: string,
  command: string,
  timeoutSeconds: number,
  beside: { readonly script: string; readonly args: ReadonlyArray<string> },
  first?: ReadonlyArray<string>,
  stepMark = ""
): ReadonlyArray<string> => {
  const { script, args } = firstThen(BESIDE_SCRIPT, first)
  return [
    "/bin/sh",
    "-c",
    script,
    "prbox-probe-beside",
    ...args,
    PROBE_SCRIPT,
    String(timeoutSeconds),
    beside.script,
    PROBE_FLAGS[mode],
    mark,
    command,
    stepMark,
    ...beside.args
  ]
}

/** More shell text than this is never sent as a step (the probe's environment is bounded by its output). */
const STEP_FRAME_MAX = 256 * 1024

const quoted = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`

/**
 * What BESIDE_SCRIPT's stdin brings for a step: `argv` run by `env` with
 * `env` over the exec's own (as an exec's environment is), its lines
 * counted first. No step is "0". Undefined where `env` could take a word
 * for an option or a variable (a name or a command that starts with `-`,
 * a command with `=`), where an exec's environment refuses it (a name with
 * `=`, a NUL), or past STEP_FRAME_MAX: the caller runs it in an exec of its
 * own.
 */
export const stepFrame = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string>>): string | undefined => {
  const [command] = argv
  if (command === undefined || command.startsWith("-") || command.includes("=")) return undefined
  const names = Object.keys(env)
  // What an exec's own environment refuses (a name with `=`, a NUL) is refused there, never sent here.
  if (names.some((name) => name.length === 0 || name.startsWith("-") || name.includes("="))) return undefined
  if ([...Object.values(env), ...argv].some((word) => word.includes("\0"))) return undefined
  const words = [...Object.entries(env).map(([name, value]) => `${name}=${value}`), ...argv].map(quoted)
  const text = `exec env ${words.join(" ")}`
  if (text.length > STEP_FRAME_MAX) return undefined
  return `${text.split("\n").length}\n${text}\n`
}

/** BESIDE_SCRIPT's stdin when no step follows. */
export const NO_STEP = "0\n"

/** The shell's environment between the marks, and the container's PATH; undefined when the marks are not there. */
export const parseProbe = (
  stdout: string,
  mark: string,
  separator: string
): { readonly env: Record<string, string>; readonly containerPath: string | undefined } | undefined => {
  const start = stdout.indexOf(mark)
  const end = start < 0 ? -1 : stdout.indexOf(mark, start + mark.length)
  if (end < 0 || end === start + mark.length) return undefined
  const env: Record<string, string> = {}
  for (const entry of stdout.slice(start + mark.length, end).split(separator)) {
    const at = entry.indexOf("=")
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1)
  }
  const first = stdout.split("\n", 1)[0] ?? ""
  return { env, containerPath: first.startsWith("PATH=") ? first.slice("PATH=".length) : undefined }
}

/**
 * The CLI's `mergePaths`: the shell's PATH, with the container's entries it
 * lost put back where they were (a login profile that resets PATH drops an
 * image's `ENV PATH`), `sbin` folders only for root.
 */
export const mergePaths = (shellPath: string, containerPath: string, root: boolean): string => {
  const result = shellPath.split(":")
  let insertAt = 0
  for (const entry of containerPath.split(":")) {
    const at = result.indexOf(entry)
    if (at === -1) {
      if (root || !/\/sbin(\/|$)/.test(entry)) result.splice(insertAt++, 0, entry)
    } else insertAt = at + 1
  }
  return result.join(":")
}

/**
 * The probed environment as it is applied: `PWD` dropped (the CLI's), PATH
 * merged with the container's, and the variables in `kept` (prbox's own and
 * `remoteEnv`'s, which win over the probe) left out.
 */
export const appliedEnv = (
  probed: Readonly<Record<string, string>>,
  containerPath: string | undefined,
  root: boolean,
  kept: ReadonlySet<string>
): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(probed)) if (key !== "PWD" && !kept.has(key)) env[key] = value
  const path = env.PATH
  if (path !== undefined && containerPath !== undefined) env.PATH = mergePaths(path, containerPath, root)
  return env
}

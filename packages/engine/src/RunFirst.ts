/**
 * A command run first in another's exec: one `docker exec` less where two
 * run as the same user at the same time (the git identity before a
 * checkout or a probe of the user's environment, beside code-server's
 * start, where each exec slows it). Pure: script text and argv.
 */

/** What the exec's stderr says when the command run first failed. */
export const FIRST_FAILED = "prbox: the command run first failed"

/**
 * Before the script in the same `sh -c`: `$1` the count of the command's
 * arguments, then they (each quoted in the `eval`, never shell text); the
 * command runs in a subshell from `/`, its input and output none, a
 * failure said on stderr; then the script's own arguments.
 */
const FIRST_SCRIPT = [
  `n=$1`,
  `shift`,
  `run=`,
  `i=1`,
  String.raw`while [ "$i" -le "$n" ]; do run="$run \"\${$i}\""; i=$((i + 1)); done`,
  `(cd / && eval "$run") </dev/null >/dev/null 2>&1 || printf '%s\\n' '${FIRST_FAILED}' >&2`,
  `shift "$n"`
].join("\n")

/** `script` for `sh -c`, and the arguments that go before its own: with `first`, that argv runs before it. */
export const firstThen = (
  script: string,
  first: ReadonlyArray<string> | undefined
): { readonly script: string; readonly args: ReadonlyArray<string> } =>
  first === undefined
    ? { script, args: [] }
    : { script: `${FIRST_SCRIPT}\n${script}`, args: [String(first.length), ...first] }

/** How the command run first went, from its exec's stderr: "not run" when there was none. */
export type FirstOutcome = "ran" | "failed" | "not run"

export const firstOutcome = (stderr: string, first: ReadonlyArray<string> | undefined): FirstOutcome =>
  first === undefined ? "not run" : stderr.includes(FIRST_FAILED) ? "failed" : "ran"

import { inWorkspace, type SandboxId, workspacePath } from "@prbox/domain"
import { Effect } from "effect"
import { InvalidPath } from "../Errors.ts"
import type { ExecTarget } from "./ExecTarget.ts"

/**
 * Confinement of a workspace path, in two halves. Lexically here (no
 * absolute path, no `..` out: domain `workspacePath`); then inside the
 * container, where symbolic links resolve as the sandbox sees them, by the
 * shell function below that every file, diff and exec-with-cwd script starts
 * with. The container is the security boundary: this guards agents and
 * users against reaching past the workspace by mistake or by a PR's
 * symlink, and never touches the host's file system.
 */

/** Exit codes of `prbox_resolve` (kept above what the tools it precedes use). */
export const RESOLVE_MISSING = 120
export const RESOLVE_OUTSIDE = 121
export const RESOLVE_UNRESOLVABLE = 122
export const RESOLVE_NO_WORKSPACE = 123

/**
 * `prbox_resolve <workspace> <path> <must-exist 0|1>` sets `R` to the path
 * with every existing component's symlinks resolved (missing trailing
 * components kept as named), or exits with one of the codes above.
 * POSIX sh with `readlink -f` (coreutils and busybox both have it).
 */
export const RESOLVE_SH = `prbox_resolve() {
  prbox_w=$(cd -P -- "$1" 2>/dev/null && pwd -P) || exit ${RESOLVE_NO_WORKSPACE}
  prbox_a=$2; prbox_rest=
  while [ ! -e "$prbox_a" ] && [ ! -L "$prbox_a" ]; do
    [ "$3" = 1 ] && exit ${RESOLVE_MISSING}
    prbox_rest="/\${prbox_a##*/}$prbox_rest"; prbox_a=\${prbox_a%/*}; [ -n "$prbox_a" ] || prbox_a=/
  done
  prbox_r=$(readlink -f -- "$prbox_a") || exit ${RESOLVE_UNRESOLVABLE}
  case "$prbox_r" in "$prbox_w"|"$prbox_w"/*) ;; *) exit ${RESOLVE_OUTSIDE} ;; esac
  R=$prbox_r$prbox_rest
}
`

/** The refusal a `prbox_resolve` exit code means, or undefined for any other code. */
export const resolveFailure = (id: SandboxId, path: string, exitCode: number | null): InvalidPath | undefined => {
  const reason =
    exitCode === RESOLVE_MISSING
      ? "no such file or directory in the workspace"
      : exitCode === RESOLVE_OUTSIDE
        ? "resolves outside the workspace (through a symbolic link); only paths inside it are allowed"
        : exitCode === RESOLVE_UNRESOLVABLE
          ? "cannot be resolved inside the sandbox (a symbolic link loop?)"
          : exitCode === RESOLVE_NO_WORKSPACE
            ? "the sandbox's workspace folder is missing in its container; `prbox rebuild` makes it again"
            : undefined
  return reason === undefined ? undefined : new InvalidPath({ id, path, reason })
}

/** The lexical check: `input` normalized and absolute in the container, or InvalidPath. */
export const checkWorkspacePath = (
  target: ExecTarget,
  input: string
): Effect.Effect<{ readonly relative: string; readonly absolute: string }, InvalidPath> => {
  const check = workspacePath(input)
  return check._tag === "Refused"
    ? Effect.fail(new InvalidPath({ id: target.id, path: input, reason: check.reason }))
    : Effect.succeed({ relative: check.path, absolute: inWorkspace(target.workspaceFolder, check.path) })
}

import { Effect } from "effect"
import type { CommandOptions } from "../ContainerRuntime.ts"
import type { CwdRefused } from "../Errors.ts"
import { InvalidPath } from "../Errors.ts"
import type { ExecTarget } from "./ExecTarget.ts"
import { checkWorkspacePath, resolveFailure } from "./WorkspaceResolve.ts"

/** How `exec` runs a command: bounded in time and output, optionally elsewhere in the workspace and with more env. */
export interface ExecOptions {
  readonly timeoutMs: number
  /** The bound of each of stdout and stderr (head and tail kept). */
  readonly maxOutputBytes: number
  /** Relative to the workspace folder and confined to it; the folder itself when absent. */
  readonly cwd?: string
  /** Over the container's and the environment's own, for this command only. */
  readonly env?: Readonly<Record<string, string>>
}

/** The supervisor's exit when the working folder resolves to something that is not a folder. */
export const CWD_NOT_FOLDER = 124

/**
 * Where and how a sandbox command runs (exec and jobs alike): as the target's
 * user, in its workspace folder or in `cwd` confined to it (checked lexically
 * here, then resolved in the container before the command starts), with the
 * environment's `remoteEnv` under the request's `env`.
 */
export const commandOptions = (
  target: ExecTarget,
  options: Omit<ExecOptions, "maxOutputBytes">
): Effect.Effect<CommandOptions, InvalidPath> => {
  const base = { user: target.user, env: { ...target.env, ...options.env }, timeoutMs: options.timeoutMs }
  if (options.cwd === undefined) return Effect.succeed({ ...base, cwd: target.workspaceFolder })
  return Effect.map(checkWorkspacePath(target, options.cwd), ({ absolute }) => ({
    ...base,
    cwd: absolute,
    within: target.workspaceFolder
  }))
}

/** The InvalidPath a refused working folder means. */
export const cwdRefusal =
  (target: ExecTarget, cwd: string | undefined) =>
  (error: CwdRefused): InvalidPath =>
    resolveFailure(target.id, cwd ?? ".", error.exitCode) ??
    new InvalidPath({
      id: target.id,
      path: cwd ?? ".",
      reason:
        error.exitCode === CWD_NOT_FOLDER
          ? "is not a folder"
          : `cannot be used as the working folder (exit ${error.exitCode})`
    })

import { Schema } from "effect"
import { SANDBOX_STATUSES } from "./Vocabulary.ts"

export const SandboxStatus = Schema.Literals(SANDBOX_STATUSES)
export type SandboxStatus = typeof SandboxStatus.Type

/**
 * The status machine. Stop may interrupt every step; `stopped` is reachable
 * from any container-bearing state because reconcile records a container that
 * Docker says is gone; restart leaves `stopped`/`error` through `starting`;
 * legacy retirement moves a `stopped` row back to `stopping` while it works;
 * `starting` repeats while the container id and port are recorded,
 * `running` while an update records the workspace's new head, and
 * `stopped` while reconcile (or a rebuild) forgets a container.
 */
const transitions: { readonly [From in SandboxStatus]: ReadonlyArray<SandboxStatus> } = {
  creating: ["cloning", "stopping", "error"],
  cloning: ["starting", "stopping", "error"],
  starting: ["starting", "running", "stopping", "stopped", "error"],
  running: ["running", "stopping", "stopped", "error"],
  stopping: ["stopping", "stopped", "error"],
  stopped: ["starting", "stopping", "stopped", "error"],
  error: ["starting", "stopping", "stopped", "error"]
}

export const canTransition = (from: SandboxStatus, to: SandboxStatus): boolean => transitions[from].includes(to)

/** Statuses a create worker owns before any container exists. */
export const isCreateStep = (status: SandboxStatus): boolean =>
  status === "creating" || status === "cloning" || status === "starting"

/**
 * The statuses a sandbox passes through after `creating` to reach `to` by
 * the usual lifecycle (create, run, stop; or fail at once).
 */
export const lifecyclePathTo = (to: SandboxStatus): ReadonlyArray<SandboxStatus> => lifecyclePaths[to]

const lifecyclePaths: { readonly [S in SandboxStatus]: ReadonlyArray<SandboxStatus> } = {
  creating: [],
  cloning: ["cloning"],
  starting: ["cloning", "starting"],
  running: ["cloning", "starting", "running"],
  stopping: ["cloning", "starting", "running", "stopping"],
  stopped: ["cloning", "starting", "running", "stopping", "stopped"],
  error: ["error"]
}

import { SandboxConflict, type SandboxId } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Clock, Context, Effect, Layer } from "effect"
import { CONTAINER_WORKSPACE, containerUser } from "../CodeServerSpec.ts"
import { daemonSandboxUser, userSpec } from "../ContainerSpec.ts"
import { Engines, otherEngineRefusal } from "../Engines.ts"
import { mapStoreErrors } from "../Errors.ts"
import { Lifecycle } from "../Lifecycle.ts"

/** Where a command or file operation of a running sandbox runs: its container, user, folder and env. */
export interface ExecTarget {
  readonly id: SandboxId
  readonly containerId: string
  /** `uid:gid` the sandbox's setup ran as. */
  readonly user: string
  /** The workspace folder inside the container (absolute). */
  readonly workspaceFolder: string
  /** The environment's `remoteEnv` (values may be secrets). */
  readonly env: Readonly<Record<string, string>>
  /** The PR head the workspace was made at (or last updated to). */
  readonly sourceCommit: string | null
}

/**
 * The one check every exec, file, diff and job operation passes: the
 * sandbox is running and not fenced. Passing it counts as activity (gc).
 */
const make = Effect.gen(function* () {
  const repo = yield* SandboxRepo
  const { getRow } = yield* Lifecycle
  const engines = yield* Engines
  const owner = userSpec(daemonSandboxUser())
  return Effect.fn("SandboxService.execTarget")(function* (id: SandboxId, operation: string) {
    const row = yield* getRow(id)
    if (row.destroyFenced) {
      return yield* new SandboxConflict({
        id,
        reason: "an earlier destroy was not confirmed; run `prbox rm` to retry it",
        state: "fenced"
      })
    }
    const elsewhere = otherEngineRefusal(engines, row)
    if (elsewhere !== undefined) return yield* elsewhere
    if (row.status !== "running" || row.containerId === null || row.workspacePath === null) {
      return yield* new SandboxConflict({
        id,
        reason: `it is ${row.status}; ${operation} needs a running sandbox (\`prbox restart ${id}\`)`,
        state: "not-running"
      })
    }
    const plan = row.environmentPlan
    yield* repo.touch(id, yield* Clock.currentTimeMillis)
    const target: ExecTarget = {
      id,
      containerId: row.containerId,
      user: plan === null ? owner : containerUser(plan, owner),
      workspaceFolder: plan?.workspaceFolder ?? CONTAINER_WORKSPACE,
      env: plan?.remoteEnv ?? {},
      sourceCommit: row.sourceCommit
    }
    return target
  }, mapStoreErrors("sandbox.execTarget"))
})

/** The exec target of a running sandbox, by id (see above). */
export class ExecTargets extends Context.Service<ExecTargets, Effect.Success<typeof make>>()(
  "prbox/engine/ExecTargets"
) {
  static readonly layer = Layer.effect(ExecTargets, make)
}

import type { PrebuildRepo } from "@prbox/store"
import { Clock, Effect } from "effect"
import type { PrboxConfig } from "../Config.ts"
import { safeReason } from "../Errors.ts"
import {
  type EnvironmentChoice,
  type RepositoryFiles,
  type RepositoryName,
  readsWorkspace
} from "../environment/ChooseEnvironment.ts"
import { decidePrebuild, type PrebuildDecision } from "./PrebuildDecision.ts"
import { keyInputsOf, prebuildKey } from "./PrebuildKey.ts"

/** The base branch as the mirror has it, and its environment chosen from its files. */
export interface BaseEnvironment {
  readonly branch: string
  readonly commit: string
  readonly choice: EnvironmentChoice
  readonly files: RepositoryFiles
}

/** What an open knows of its PR's environment and its base's when it looks for a prebuild. */
export interface PrebuildLookup {
  readonly choice: EnvironmentChoice
  /** The PR's files (its commit in the mirror): the key is read from them. */
  readonly files: RepositoryFiles
  /** The base's; a failure leaves the base unkeyed (nothing made in the background). */
  readonly base: Effect.Effect<BaseEnvironment, { readonly message: string }>
  readonly repository: RepositoryName
  readonly config: PrboxConfig
  readonly defaultImage: string
}

/** What an open decided about prebuilds, and the base a background build would start from. */
export interface PrebuildPlan {
  readonly decision: PrebuildDecision
  /** The PR's environment key, when it has one. */
  readonly key: string | null
  readonly base: { readonly branch: string; readonly commit: string } | null
}

const OFF: PrebuildPlan = {
  decision: { open: { _tag: "Off" }, background: { _tag: "Nothing", reason: "prebuilds are off (config.json)" } },
  key: null,
  base: null
}

/**
 * Whether an environment has create-time steps a prebuild would run: one
 * without is as fast from a clone (steps an image's metadata label brings
 * are not seen here: such an environment takes today's path).
 */
export const hasCreateSteps = (choice: EnvironmentChoice): boolean =>
  choice._tag === "Devcontainer" &&
  (choice.spec.config.onCreateCommand !== undefined || choice.spec.config.updateContentCommand !== undefined)

/**
 * Whether an environment is worth a prebuild: create-time steps to run once,
 * or a warm pool to start from it (pool containers start from a prebuild's
 * image and checkout; an environment built from the files is never pooled).
 */
export const worthPrebuilding = (choice: EnvironmentChoice, config: PrboxConfig): boolean =>
  hasCreateSteps(choice) || (config.warmPool.size > 0 && !readsWorkspace(choice))

/**
 * The open's path (a ready prebuild of the PR's own environment key, or
 * today's full path and why) and what is made in the background. A key or
 * a store that cannot be read is the full path, said why, never a guess.
 */
export const planPrebuild = (repo: PrebuildRepo["Service"], lookup: PrebuildLookup) =>
  Effect.gen(function* () {
    if (lookup.config.prebuilds === false || !worthPrebuilding(lookup.choice, lookup.config)) return OFF
    const keyOf = (choice: EnvironmentChoice, files: RepositoryFiles) =>
      Effect.flatMap(
        keyInputsOf(choice, files, lookup.repository, lookup.config, lookup.defaultImage),
        (inputs): Effect.Effect<string | { readonly unkeyable: string }, { readonly message: string }> =>
          "_tag" in inputs ? Effect.succeed({ unkeyable: inputs.reason }) : prebuildKey(inputs)
      )
    // The base is read beside the PR's key: an open's path waits on both.
    const [prKey, base] = yield* Effect.all([keyOf(lookup.choice, lookup.files), Effect.result(lookup.base)], {
      concurrency: 2
    })
    const baseKey =
      base._tag === "Success"
        ? yield* keyOf(base.success.choice, base.success.files)
        : { unkeyable: `the base branch cannot be read: ${base.failure.message}` }
    const { host, repository } = lookup.repository
    const rows = (yield* repo.list).filter((row) => row.host === host && row.repository === repository)
    const now = yield* Clock.currentTimeMillis
    const baseCommit = base._tag === "Success" ? base.success.commit : ""
    return {
      decision: decidePrebuild({ enabled: true, prKey, baseKey, baseCommit, rows, now }),
      key: typeof prKey === "string" ? prKey : null,
      base: base._tag === "Success" ? { branch: base.success.branch, commit: base.success.commit } : null
    } satisfies PrebuildPlan
  }).pipe(
    Effect.catch((error) =>
      Effect.succeed({
        ...OFF,
        decision: {
          open: { _tag: "Full", reason: `prebuilds could not be looked up: ${safeReason(error)}` },
          background: { _tag: "Nothing", reason: "prebuilds could not be looked up" }
        }
      } satisfies PrebuildPlan)
    )
  )

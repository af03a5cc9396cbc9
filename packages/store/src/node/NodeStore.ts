import { Layer } from "effect"
import type { JobRepo } from "../JobRepo.ts"
import type { PoolRepo } from "../PoolRepo.ts"
import type { PrebuildRepo } from "../PrebuildRepo.ts"
import type { DatabaseUnreadable, InsecurePermissions, SandboxRepo, StoreError } from "../SandboxRepo.ts"
import type { Settings } from "../Settings.ts"
import * as NodeJobRepo from "./NodeJobRepo.ts"
import * as NodePoolRepo from "./NodePoolRepo.ts"
import * as NodePrebuildRepo from "./NodePrebuildRepo.ts"
import * as NodeSandboxRepo from "./NodeSandboxRepo.ts"
import * as NodeSettings from "./NodeSettings.ts"
import { type Options, SqliteDatabase } from "./SqliteDatabase.ts"

export type { Options } from "./SqliteDatabase.ts"

/**
 * The repository, the daemon's settings, the jobs, the prebuilds and the warm pool on the state directory's
 * database, through one connection (SqliteDatabase). Opening it marks the jobs
 * a previous daemon left running `lost`; releasing the layer closes the connection.
 */
export const layer = (
  options: Options
): Layer.Layer<
  SandboxRepo | Settings | JobRepo | PrebuildRepo | PoolRepo,
  InsecurePermissions | DatabaseUnreadable | StoreError
> =>
  Layer.mergeAll(
    NodeSandboxRepo.layer,
    NodeSettings.layer,
    NodeJobRepo.layer,
    NodePrebuildRepo.layer,
    NodePoolRepo.layer
  ).pipe(Layer.provide(SqliteDatabase.layer(options)))

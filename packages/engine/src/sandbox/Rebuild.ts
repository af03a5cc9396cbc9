import { restartRefusal, SandboxConflict, type SandboxId } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { Context, Effect, FileSystem, Layer } from "effect"
import { Config } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { ExtraLabels } from "../ContainerSpec.ts"
import { Workers } from "../create/Workers.ts"
import { Engines, otherEngineRefusal } from "../Engines.ts"
import { mapStoreErrors } from "../Errors.ts"
import {
  baseBranchFiles,
  chooseEnvironment,
  configurationName,
  workspaceFiles
} from "../environment/ChooseEnvironment.ts"
import { containerFiles } from "../environment/ContainerFiles.ts"
import { engineWorkspaceFiles } from "../environment/EngineWorkspace.ts"
import { ExecTargets } from "../exec/ExecTarget.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { Stop } from "./Stop.ts"

const STILL_STOPPING = "it is still stopping; retry after it has stopped"

/**
 * `prbox rebuild`: a new container for the sandbox, keeping its workspace,
 * home and port. Its environment is read again from the workspace's
 * devcontainer.json as the container sees it (or the config); then the old container is stopped and
 * removed (fence first), and the restart worker builds or pulls the image,
 * makes the new container and runs the create-time steps.
 */
const make = Effect.gen(function* () {
  const workers = yield* Workers
  const { dropContainer } = yield* Stop
  const extraLabels = yield* ExtraLabels
  const config = yield* Config
  const lifecycle = yield* Lifecycle
  const fs = yield* FileSystem.FileSystem
  const engines = yield* Engines
  const runtime = yield* ContainerRuntime
  const execTarget = yield* ExecTargets
  const workspaces = yield* Workspaces

  return Effect.fn("SandboxService.rebuild")(function* (id: SandboxId) {
    const cfg = yield* config.load.pipe(Effect.mapError((error) => new SandboxConflict({ id, reason: error.message })))
    return yield* lifecycle.admit(
      Effect.gen(function* () {
        const row = yield* lifecycle.getRow(id)
        const stopping = row.status === "stopping" || (yield* Effect.isFailure(lifecycle.failIfStopRequested(id)))
        if (stopping) return yield* new SandboxConflict({ id, reason: STILL_STOPPING })
        // A running sandbox is stopped by the rebuild itself; every other rule of restart holds.
        const refusal = restartRefusal(row.status === "running" ? { ...row, status: "stopped" } : row)
        if (refusal !== undefined) return yield* new SandboxConflict({ id, reason: refusal })
        const elsewhere = otherEngineRefusal(engines, row)
        if (elsewhere !== undefined) return yield* elsewhere
        // The environment is read again from the workspace, and refused before the old container goes:
        // a running sandbox's through its container (an edit made in it is what is rebuilt); a stopped
        // one's through the engine (links resolve there, never here); on an engine that is sent the
        // files, from the host's copy, which no container sees.
        const files =
          row.status === "running"
            ? containerFiles(runtime, yield* execTarget(id, "rebuild"))
            : (yield* runtime.filesAt) === "host"
              ? engineWorkspaceFiles(runtime, row.workspacePath ?? "", extraLabels)
              : workspaceFiles(fs, row.workspacePath ?? "")
        const mirrorPath = workspaces.mirrorPath({
          host: row.host ?? "",
          repository: row.repository,
          ...(cfg.profile === undefined ? {} : { profile: cfg.profile })
        })
        const base = baseBranchFiles(workspaces, mirrorPath, row.baseRef ?? undefined)
        const choice = yield* chooseEnvironment(
          files,
          { host: row.host ?? "", repository: row.repository },
          cfg,
          configurationName(row.environment),
          base
        )
        // A Compose project's files are copied once its containers are gone: read through the engine then.
        const rebuild =
          choice._tag === "Devcontainer" && choice.spec.source._tag === "Compose" && row.status === "running"
            ? { ...choice, files: engineWorkspaceFiles(runtime, row.workspacePath ?? "", extraLabels) }
            : choice
        const dropped = yield* dropContainer(id)
        return yield* workers.admitRestart(dropped, cfg, { rebuild })
      })
    )
  }, mapStoreErrors("sandbox.rebuild"))
})

export class Rebuild extends Context.Service<Rebuild, Effect.Success<typeof make>>()("prbox/engine/Rebuild") {
  static readonly layer = Layer.effect(Rebuild, make)
}

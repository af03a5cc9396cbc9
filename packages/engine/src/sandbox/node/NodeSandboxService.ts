import type { SandboxId } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Clock, Effect } from "effect"
import { ContainerRuntime } from "../../ContainerRuntime.ts"
import { makeWorkers } from "../../create/Workers.ts"
import { mapStoreErrors } from "../../Errors.ts"
import { commandOptions, cwdRefusal } from "../../exec/CommandPlace.ts"
import { makeExecTarget } from "../../exec/ExecTarget.ts"
import { Lifecycle } from "../../Lifecycle.ts"
import { makeOwnership } from "../../workspace/Ownership.ts"
import { makeAdmission } from "../Admission.ts"
import { makeRebuild } from "../Rebuild.ts"
import { type ExecOptions, SandboxService } from "../SandboxService.ts"
import { makeTeardown } from "../Stop.ts"
import { makeUpdate } from "../Update.ts"

export interface SandboxServiceOptions {
  /** Extra labels on every container (tests label their run with them). */
  readonly labels?: Readonly<Record<string, string>>
}

/**
 * SandboxService, wired from its parts: admission (Admission.ts), the
 * workers (Workers.ts: ownership, container start + health, setup), and
 * teardown (Teardown.ts). What is left here reads rows and runs exec.
 */
export const make = (options: SandboxServiceOptions = {}) =>
  Effect.gen(function* () {
    const repo = yield* SandboxRepo
    const runtime = yield* ContainerRuntime
    const lifecycle = yield* Lifecycle
    const ownership = yield* makeOwnership
    const workers = yield* makeWorkers(ownership, options.labels ?? {})
    const { open, restart } = yield* makeAdmission(workers)
    const teardown = yield* makeTeardown(workers, ownership, options.labels ?? {})
    const update = yield* makeUpdate(workers.runUpdateContent)
    const rebuild = yield* makeRebuild(workers, teardown, options.labels ?? {})
    const { getRow } = lifecycle

    const execTarget = yield* makeExecTarget

    /** A command in a running sandbox, as the user its setup ran as, in its workspace folder, with its remote env. */
    const exec = Effect.fn("SandboxService.exec")(function* (
      id: SandboxId,
      argv: ReadonlyArray<string>,
      options: ExecOptions
    ) {
      const target = yield* execTarget(id, "exec")
      const place = yield* commandOptions(target, options)
      const { within, ...rest } = place
      if (within === undefined)
        return yield* runtime.exec(target.containerId, argv, { ...rest, maxOutputBytes: options.maxOutputBytes })
      return yield* runtime
        .exec(target.containerId, argv, { ...rest, within, maxOutputBytes: options.maxOutputBytes })
        .pipe(Effect.catchTag("CwdRefused", (error) => Effect.fail(cwdRefusal(target, options.cwd)(error))))
    })

    return SandboxService.of({
      exec,
      open,
      get: (id) => getRow(id).pipe(mapStoreErrors("sandbox.get")),
      list: repo.findActive().pipe(mapStoreErrors("sandbox.list")),
      listAll: repo.findAll().pipe(mapStoreErrors("sandbox.listAll")),
      generation: repo.generation,
      stop: teardown.stop,
      restart,
      update,
      rebuild,
      delete: teardown.delete,
      logs: (id, options) => repo.readLog(id, options).pipe(mapStoreErrors("sandbox.logs")),
      touch: (id) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => repo.touch(id, at)).pipe(mapStoreErrors("sandbox.touch")),
      events: lifecycle.events,
      awaitIdle: lifecycle.awaitIdle
    })
  })

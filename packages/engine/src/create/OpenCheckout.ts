import type { Sandbox } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { Context, Effect, Fiber, Layer } from "effect"
import type { PrboxConfig } from "../Config.ts"
import { ContainerRuntime, type ExecOutcome } from "../ContainerRuntime.ts"
import { userSpec } from "../ContainerSpec.ts"
import type { ExecTarget } from "../exec/ExecTarget.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { checkoutInContainer } from "../workspace/ContainerWorkspaceGit.ts"
import { Ownership } from "../workspace/Ownership.ts"
import { type ContainerEnvironment, CreateContainer } from "./CreateContainer.ts"
import { GitIdentity, type GitIdentityValues, IDENTITY_WARNING, identityArgv } from "./GitIdentity.ts"
import type { BesideCommand } from "./ProbeBeside.ts"
import { setupUser } from "./Setup.ts"

/** A container started before its files were written, and the environment it was made from. */
export interface StartedEarly {
  readonly environment: ContainerEnvironment
  readonly started: Effect.Success<ReturnType<CreateContainer["Service"]["start"]>>
  /** Its git identity was written already, in its checkout's exec. */
  readonly identityWritten?: boolean
  /** The host's git identity, read while the container started (else read once it runs). */
  readonly identity?: Effect.Effect<GitIdentityValues>
  /** Its checkout, for the probe's exec to run beside the user's shell (a prebuilt workspace's). */
  readonly besideProbe?: CheckoutBesideProbe
}

/**
 * A checkout the probe's exec of the same user can run (one exec less beside
 * code-server's start): its command, and where its outcome goes (`ran`);
 * `declined` once the probe will not run it, so the checkout makes its own exec.
 */
export interface CheckoutBesideProbe {
  readonly user: string
  readonly command: Effect.Effect<BesideCommand, unknown>
  readonly ran: (outcome: ExecOutcome) => Effect.Effect<void>
  readonly declined: Effect.Effect<void>
}

/** What a new clone (its `.git`, made with `checkout: false`) is to be checked out as. */
export interface CloneTarget {
  readonly workspacePath: string
  readonly branch: string
  readonly commit: string
}

/**
 * How a new sandbox of an image gets its files once its clone is made: no
 * host program runs in the workspace once a container of it may run.
 */
const make = Effect.gen(function* () {
  const ownership = yield* Ownership
  const container = yield* CreateContainer
  const workspaces = yield* Workspaces
  const runtime = yield* ContainerRuntime
  const { progress } = yield* Lifecycle
  const gitIdentity = yield* GitIdentity

  /**
   * The files written here while no container of the sandbox has run
   * (one made is not started yet, or the engine has its own copy): as the
   * sandbox user where a root daemon can, else handed to them by a walk.
   */
  const checkoutCloneHere = (clone: CloneTarget) =>
    Effect.gen(function* () {
      const owner = yield* ownership.newWorkspaceOwner
      yield* workspaces.checkoutClone({
        destination: clone.workspacePath,
        branchName: clone.branch,
        commit: clone.commit,
        ...(owner === undefined ? {} : { owner })
      })
      yield* ownership.handOverCheckout(clone.workspacePath, owner)
    })

  /**
   * On the local engine: the container starts (code-server's start is most
   * of an open) and its own git writes the files, as the sandbox user,
   * while code-server starts, the git identity written first in the same
   * exec (`identityWritten`). An image without git gets them from the
   * host before its container first starts.
   */
  const startAndCheckOut = (
    starting: Sandbox,
    config: PrboxConfig,
    environment: ContainerEnvironment,
    clone: CloneTarget
  ) =>
    Effect.gen(function* () {
      const { plan } = environment
      const user = userSpec(ownership.sandboxUser)
      // The identity goes first in the checkout's exec when the setup's user is the checkout's (all but
      // runAsRoot), read on the host while the container starts.
      const identity =
        setupUser(plan, ownership.sandboxUser) === user
          ? yield* Effect.forkChild(gitIdentity.values(config), { startImmediately: true })
          : undefined
      const started = yield* container.start(starting.id, config, environment, {
        workspacePath: clone.workspacePath,
        checkoutHere: checkoutCloneHere(clone)
      })
      const early: StartedEarly = { environment, started }
      if (!started.checkoutInContainer) return early
      yield* progress(starting, `checking out ${clone.commit} as ${clone.branch} in the sandbox`).pipe(Effect.ignore)
      const target: ExecTarget = {
        id: starting.id,
        containerId: started.containerId,
        user,
        workspaceFolder: plan.workspaceFolder,
        env: {},
        sourceCommit: clone.commit
      }
      const first = identity === undefined ? undefined : identityArgv(plan, yield* Fiber.join(identity))
      // A checkout that fails ends the worker, which stops the container (Workers' supervise).
      const outcome = yield* checkoutInContainer(runtime, target, clone.branch, clone.commit, first)
      if (outcome === "failed") yield* progress(starting, IDENTITY_WARNING).pipe(Effect.ignore)
      return { ...early, identityWritten: outcome !== "not run" }
    })

  return { startAndCheckOut, checkoutCloneHere }
})

export class OpenCheckout extends Context.Service<OpenCheckout, Effect.Success<typeof make>>()(
  "prbox/engine/OpenCheckout"
) {
  static readonly layer = Layer.effect(OpenCheckout, make)
}

import { devcontainerIdFromDigest, devcontainerIdInput } from "@prbox/devcontainer"
import { Effect } from "effect"
import { LABELS } from "../ContainerSpec.ts"
import { SetupFailed } from "../Errors.ts"

/**
 * A sandbox's `${devcontainerId}`: the CLI's derivation over the sandbox's
 * own id label, so it is the same for the sandbox's life (a rebuild keeps
 * it) and differs between sandboxes, as the spec asks.
 */
export const devcontainerIdOf = (sandboxId: string) =>
  Effect.tryPromise({
    try: () =>
      crypto.subtle.digest("SHA-256", new TextEncoder().encode(devcontainerIdInput({ [LABELS.sandbox]: sandboxId }))),
    catch: () => new SetupFailed({ reason: "could not derive the sandbox's devcontainerId (SHA-256 unavailable)" })
  }).pipe(Effect.map((digest) => devcontainerIdFromDigest(new Uint8Array(digest))))

import { Effect, type Scope } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import * as RemoteEngineSupport from "../../../scripts/testing/remote-engine.ts"

/* The remote engine for tests (scripts/testing/remote-engine.ts), its container labelled with the test run. */

export type { RemoteEngine, TcpRelay } from "../../../scripts/testing/remote-engine.ts"
export { remoteEngineTag, startTcpRelay } from "../../../scripts/testing/remote-engine.ts"

export const startRemoteEngine = Effect.suspend(() =>
  RemoteEngineSupport.startRemoteEngine({ [TEST_RUN_LABEL]: inject("testRunId") })
)

/** A remote engine (startRemoteEngine) holding `tags`, images of the local engine loaded into it. */
export const remoteEngineWith = (
  ...tags: ReadonlyArray<string>
): Effect.Effect<RemoteEngineSupport.RemoteEngine, never, Scope.Scope> =>
  Effect.tap(startRemoteEngine, (remote) => Effect.forEach(tags, remote.loadImage, { discard: true }))

import { Effect } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import * as RemoteEngineSupport from "../../../scripts/testing/remote-engine.ts"

/* The remote engine for tests (scripts/testing/remote-engine.ts), its container labelled with the test run. */

export type { RemoteEngine, TcpRelay } from "../../../scripts/testing/remote-engine.ts"
export { remoteEngineTag, startTcpRelay } from "../../../scripts/testing/remote-engine.ts"

export const startRemoteEngine = Effect.suspend(() =>
  RemoteEngineSupport.startRemoteEngine({ [TEST_RUN_LABEL]: inject("testRunId") })
)

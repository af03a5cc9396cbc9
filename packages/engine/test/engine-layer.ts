/**
 * The real engine on a given home, with optional wrappers around its parts
 * (latches, fault injection, observation). No vitest import: the crash test's
 * child process (a plain Node process) builds it too.
 */

import { PullRequests } from "@prbox/git"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { AccountIdentity, type PrboxConfig } from "../src/index.ts"
import { NodeEngine } from "../src/node/index.ts"

export interface EngineLayerOptions
  extends Pick<NodeEngine.Wrappers, "runtime" | "health" | "workspaces" | "git" | "hooks" | "lifecycle" | "foreground">,
    Pick<NodeEngine.Options, "identity" | "pullRequests" | "engine"> {
  readonly home: string
  /** The test run's id: every container gets `dev.prbox.test-run=<runId>`. */
  readonly runId: string
  /** The image and other settings; ignored with `configFile`. */
  readonly config: Partial<PrboxConfig>
  /** Read `<home>/config.json` as the daemon does, instead of `config`. */
  readonly configFile?: boolean
}

/** The engine as the daemon builds it (NodeEngine), labelled with the test run; no account discovery nor hosting service unless given. */
export const engineLayer = (options: EngineLayerOptions) => {
  const { home, runId, config, configFile, identity, pullRequests, engine, ...wrap } = options
  return NodeEngine.layer({
    home,
    ...(engine === undefined ? {} : { engine }),
    labels: { [TEST_RUN_LABEL]: runId },
    identity: identity ?? AccountIdentity.unavailable,
    pullRequests: pullRequests ?? PullRequests.unavailable,
    wrap,
    // A fill or a prebuild starts as soon as an open is running: tests wait on them.
    settleAfterOpenMs: 0,
    // The distribution `scripts/setup --with-test-images` built: tests never build their own.
    ...(process.env.PRBOX_TEST_CODE_SERVER_DIST === undefined
      ? {}
      : { codeServerDir: process.env.PRBOX_TEST_CODE_SERVER_DIST }),
    // Prebuilds only where a test asks for them: a background build outlives the open that started it.
    ...(configFile === true
      ? {}
      : { config: { healthTimeoutSeconds: 30, prebuilds: false, warmPool: { size: 0, idleMinutes: 30 }, ...config } })
  })
}

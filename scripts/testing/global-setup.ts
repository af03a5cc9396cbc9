import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import type { TestProject } from "vitest/node"
import { testDistributionDir } from "../images/cache.ts"

/** Label every test container carries, so the run can prove it left none behind. */
export const TEST_RUN_LABEL = "dev.prbox.test-run"

declare module "vitest" {
  export interface ProvidedContext {
    testRunId: string
  }
}

const containersOfRun = (runId: string): Array<string> =>
  execFileSync("docker", ["ps", "-a", "-q", "--filter", `label=${TEST_RUN_LABEL}=${runId}`], {
    encoding: "utf8"
  })
    .split("\n")
    .filter((line) => line.length > 0)

const volumesOfRun = (runId: string): Array<string> =>
  execFileSync("docker", ["volume", "ls", "-q", "--filter", `label=${TEST_RUN_LABEL}=${runId}`], {
    encoding: "utf8"
  })
    .split("\n")
    .filter((line) => line.length > 0)

const networksOfRun = (runId: string): Array<string> =>
  execFileSync("docker", ["network", "ls", "-q", "--filter", `label=${TEST_RUN_LABEL}=${runId}`], {
    encoding: "utf8"
  })
    .split("\n")
    .filter((line) => line.length > 0)

export default function setup(project: TestProject) {
  const runId = process.env.PRBOX_TEST_RUN ?? randomBytes(6).toString("hex")
  process.env.PRBOX_TEST_RUN = runId
  project.provide("testRunId", runId)
  // The code-server distribution `scripts/setup --with-test-images` built, for tests that mount it.
  process.env.PRBOX_TEST_CODE_SERVER_DIST ??= testDistributionDir()
  return () => {
    // Fail closed: if Docker cannot be asked, the run cannot claim it is clean.
    const left = containersOfRun(runId)
    if (left.length > 0) {
      execFileSync("docker", ["rm", "-f", "-v", ...left])
      throw new Error(`test run ${runId} left ${left.length} container(s) behind: ${left.join(", ")}`)
    }
    // Volumes after containers: a container's removal frees the volumes it used.
    const volumes = volumesOfRun(runId)
    if (volumes.length > 0) {
      execFileSync("docker", ["volume", "rm", "-f", ...volumes])
      throw new Error(`test run ${runId} left ${volumes.length} volume(s) behind: ${volumes.join(", ")}`)
    }
    // A Compose sandbox's networks, labelled as its containers are.
    const networks = networksOfRun(runId)
    if (networks.length > 0) {
      execFileSync("docker", ["network", "rm", ...networks])
      throw new Error(`test run ${runId} left ${networks.length} network(s) behind: ${networks.join(", ")}`)
    }
  }
}

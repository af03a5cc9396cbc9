import { execFileSync } from "node:child_process"
import { Effect } from "effect"
import { PREBUILD_HOME_LABEL, PREBUILD_IMAGE_LABELS } from "../src/index.ts"

const lines = (args: ReadonlyArray<string>) =>
  execFileSync("docker", args, { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

/**
 * What this test's home made for prebuilds, removed with it (a test's
 * cleanup; gc's own is tested apart): the sandboxes' containers made from
 * a prebuild's image (they carry its labels), then the volumes and images.
 */
export const removePrebuildsOf = (home: string) =>
  Effect.sync(() => {
    const imageLabel = `label=${PREBUILD_IMAGE_LABELS.home}=${home}`
    const containers = lines(["ps", "-aq", "--filter", imageLabel])
    if (containers.length > 0) execFileSync("docker", ["rm", "-f", ...containers], { stdio: "ignore" })
    const volumes = lines(["volume", "ls", "-q", "--filter", `label=${PREBUILD_HOME_LABEL}=${home}`])
    if (volumes.length > 0) execFileSync("docker", ["volume", "rm", "-f", ...volumes], { stdio: "ignore" })
    const images = lines(["images", "-q", "--filter", imageLabel])
    if (images.length > 0) execFileSync("docker", ["rmi", "-f", ...new Set(images)], { stdio: "ignore" })
  })

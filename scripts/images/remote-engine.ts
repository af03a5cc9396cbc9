import { copyFileSync, linkSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { cacheBase } from "./cache.ts"
import { directoryInputs, docker, type ImageRecipe } from "./images.ts"
import { debianRootfs, rootfsInputs } from "./rootfs.ts"

/**
 * A second, real Docker engine for the tests of prbox on a remote engine:
 * Debian bookworm (scripts/images/rootfs.ts) with docker.io and
 * openssh-server, run privileged, reached only through its sshd
 * (packages/docker/test/RemoteEngine.ts starts it).
 */
const recipeDir = join(import.meta.dirname, "remote-engine")
/** debootstrap resolves their dependencies (containerd, runc, tini, iptables' libraries...). */
const PACKAGES = ["ca-certificates", "procps", "iptables", "docker.io", "openssh-server"].join(",")

const log = (line: string): void => {
  process.stderr.write(`[prbox images] remote-engine: ${line}\n`)
}

const build = async (tag: string): Promise<void> => {
  const started = Date.now()
  const rootfs = await debianRootfs("remote-engine", PACKAGES)
  const context = mkdtempSync(join(cacheBase(), "remote-engine", "context."))
  try {
    // A hard link: the build context costs no copy of the root filesystem.
    linkSync(rootfs, join(context, "rootfs.tar"))
    for (const file of readdirSync(recipeDir)) copyFileSync(join(recipeDir, file), join(context, file))
    log(`docker build ${tag}`)
    docker(["build", "--quiet", "--tag", tag, context])
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
  log(`built ${tag} in ${Math.round((Date.now() - started) / 1000)}s`)
}

export const remoteEngineImage: ImageRecipe = {
  name: "remote-engine",
  inputs: () => [...rootfsInputs(PACKAGES), ...directoryInputs(recipeDir)],
  build
}

import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { debianMirror } from "../../packages/engine/src/node/tools/DebianMirror.ts"
import { cacheBase } from "./cache.ts"
import { directoryInputs, docker, type ImageRecipe } from "./images.ts"

/**
 * A second, real Docker engine for the tests of prbox on a remote engine:
 * Debian bookworm debootstrapped by prbox's own rootfs.sh with docker.io and
 * openssh-server, run privileged, reached only through its sshd
 * (packages/docker/test/RemoteEngine.ts starts it).
 */
const recipeDir = join(import.meta.dirname, "remote-engine")
const rootfsScript = fileURLToPath(
  new URL("../../packages/engine/src/node/tools/default-image/rootfs.sh", import.meta.url)
)
const SUITE = "bookworm"
/** debootstrap resolves their dependencies (containerd, runc, tini, iptables' libraries...). */
const PACKAGES = ["ca-certificates", "procps", "iptables", "docker.io", "openssh-server"].join(",")

const log = (line: string): void => {
  process.stderr.write(`[prbox images] remote-engine: ${line}\n`)
}

const keyOf = (parts: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part).update("\0")
  return hash.digest("hex").slice(0, 16)
}

/** The root filesystem tar, cached by content under `$PRBOX_CACHE/remote-engine` (a rebuild is a `docker build`). */
const ensureRootfs = async (): Promise<string> => {
  const mirror = await Effect.runPromise(debianMirror(SUITE).pipe(Effect.provide(NodeServices.layer)))
  const cache = join(cacheBase(), "remote-engine")
  const archive = join(cache, `rootfs-${keyOf([SUITE, mirror, PACKAGES, readFileSync(rootfsScript, "utf8")])}.tar`)
  if (existsSync(archive)) {
    log(`using ${archive}`)
    return archive
  }
  mkdirSync(cache, { recursive: true })
  log(`Debian ${SUITE} from ${mirror} with ${PACKAGES} (debootstrap, a few minutes)`)
  execFileSync("bash", [rootfsScript, SUITE, mirror, PACKAGES, archive], { stdio: ["ignore", "inherit", "inherit"] })
  // Archives of older recipes are never used again.
  for (const file of readdirSync(cache)) {
    if (/^rootfs-[0-9a-f]{16}\.tar$/.test(file) && join(cache, file) !== archive) rmSync(join(cache, file))
  }
  return archive
}

const build = async (tag: string): Promise<void> => {
  const started = Date.now()
  const rootfs = await ensureRootfs()
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
  inputs: () => [SUITE, PACKAGES, readFileSync(rootfsScript, "utf8"), ...directoryInputs(recipeDir)],
  build
}

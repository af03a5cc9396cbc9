import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { debianMirror } from "../../packages/engine/src/node/tools/DebianMirror.ts"
import { cacheBase } from "./cache.ts"
import { docker, type ImageRecipe } from "./images.ts"

/**
 * A database server for the Compose tests (an app service and its
 * database): Debian bookworm's redis-server, debootstrapped by prbox's own
 * rootfs.sh and imported (`docker import`), listening on 6379 on every
 * interface of its container, as a Compose project's database does. Redis:
 * the smallest Debian database server, ready in milliseconds.
 */
const rootfsScript = fileURLToPath(
  new URL("../../packages/engine/src/node/tools/default-image/rootfs.sh", import.meta.url)
)
const SUITE = "bookworm"
const PACKAGES = ["redis-server"].join(",")
/** How the image runs: redis in the foreground, reachable from the project's other services. */
const CHANGES = [
  "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "EXPOSE 6379",
  'CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]'
]

const log = (line: string): void => {
  process.stderr.write(`[prbox images] database: ${line}\n`)
}

const keyOf = (parts: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part).update("\0")
  return hash.digest("hex").slice(0, 16)
}

/** The root filesystem tar, cached by content under `$PRBOX_CACHE/database`. */
const ensureRootfs = async (): Promise<string> => {
  const mirror = await Effect.runPromise(debianMirror(SUITE).pipe(Effect.provide(NodeServices.layer)))
  const cache = join(cacheBase(), "database")
  const archive = join(cache, `rootfs-${keyOf([SUITE, mirror, PACKAGES, readFileSync(rootfsScript, "utf8")])}.tar`)
  if (existsSync(archive)) return archive
  mkdirSync(cache, { recursive: true })
  log(`Debian ${SUITE} from ${mirror} with ${PACKAGES} (debootstrap, a minute or two)`)
  execFileSync("bash", [rootfsScript, SUITE, mirror, PACKAGES, archive], { stdio: ["ignore", "inherit", "inherit"] })
  for (const file of readdirSync(cache)) {
    if (/^rootfs-[0-9a-f]{16}\.tar$/.test(file) && join(cache, file) !== archive) rmSync(join(cache, file))
  }
  return archive
}

export const databaseImage: ImageRecipe = {
  name: "database",
  inputs: () => [SUITE, PACKAGES, readFileSync(rootfsScript, "utf8"), ...CHANGES],
  build: async (tag) => {
    const rootfs = await ensureRootfs()
    docker(["import", ...CHANGES.flatMap((change) => ["--change", change]), rootfs, tag])
  }
}

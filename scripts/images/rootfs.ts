import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { debianMirror } from "../../packages/engine/src/node/tools/DebianMirror.ts"
import { cacheBase } from "./cache.ts"

/**
 * A Debian root filesystem for a test image, debootstrapped by prbox's own
 * rootfs.sh (the default image's) and cached by content under
 * `$PRBOX_CACHE/<name>`: the suite, the mirror, the packages and the script.
 */
const rootfsScript = fileURLToPath(
  new URL("../../packages/engine/src/node/tools/default-image/rootfs.sh", import.meta.url)
)

export const SUITE = "bookworm"

/** What a recipe's image depends on through its root filesystem (for its tag). */
export const rootfsInputs = (packages: string): ReadonlyArray<string> => [
  SUITE,
  packages,
  readFileSync(rootfsScript, "utf8")
]

const keyOf = (parts: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part).update("\0")
  return hash.digest("hex").slice(0, 16)
}

/** The root filesystem tar for `packages` (comma-separated), made once per content. */
export const debianRootfs = async (name: string, packages: string): Promise<string> => {
  const log = (line: string) => process.stderr.write(`[prbox images] ${name}: ${line}\n`)
  const mirror = await Effect.runPromise(debianMirror(SUITE).pipe(Effect.provide(NodeServices.layer)))
  const cache = join(cacheBase(), name)
  const archive = join(cache, `rootfs-${keyOf([SUITE, mirror, packages, readFileSync(rootfsScript, "utf8")])}.tar`)
  if (existsSync(archive)) {
    log(`using ${archive}`)
    return archive
  }
  mkdirSync(cache, { recursive: true })
  log(`Debian ${SUITE} from ${mirror} with ${packages} (debootstrap, a few minutes)`)
  execFileSync("bash", [rootfsScript, SUITE, mirror, packages, archive], { stdio: ["ignore", "inherit", "inherit"] })
  // Archives of older recipes are never used again.
  for (const file of readdirSync(cache)) {
    if (/^rootfs-[0-9a-f]{16}\.tar$/.test(file) && join(cache, file) !== archive) rmSync(join(cache, file))
  }
  return archive
}

import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

/**
 * The installed package's addon directory relative to this module's chunk:
 * defined by the package's bundler (scripts/package/bundle.ts); undeclared
 * when run from sources, where better-sqlite3 finds its own addon.
 */
declare const PRBOX_BUNDLED_ADDONS: string | undefined

/** The addon the package's install step builds from source when no shipped one loads (scripts/package/files/addon.cjs). */
export const BUILT_ADDON = "better_sqlite3.node"

/** A shipped addon: Node-API, so one file serves every Node version of its platform and architecture. */
export const shippedAddon = (platform: string, arch: string): string => `better_sqlite3-${platform}-${arch}.node`

/** Why no addon was found, with the fix (the package's install step builds one). */
export const missingAddon = (directory: string): string =>
  `no SQLite addon for ${process.platform}-${process.arch} in ${directory}: run "npm rebuild -g prbox" to build one ` +
  "(needs python3, make, a C++ compiler and Node's headers)"

const find = (): string | undefined => {
  if (typeof PRBOX_BUNDLED_ADDONS !== "string") return undefined
  const directory = new URL(PRBOX_BUNDLED_ADDONS, import.meta.url)
  for (const name of [BUILT_ADDON, shippedAddon(process.platform, process.arch)]) {
    const path = fileURLToPath(new URL(name, directory))
    if (existsSync(path)) return path
  }
  throw new Error(missingAddon(fileURLToPath(directory)))
}

let found: { readonly path: string | undefined } | undefined

/**
 * better-sqlite3's `nativeBinding` option: undefined from sources; in the
 * installed package the addon its install step built, else the shipped one
 * for this platform. Throws (one line naming the fix) when there is none.
 */
export const nativeBinding = (): string | undefined => {
  found ??= { path: find() }
  return found.path
}

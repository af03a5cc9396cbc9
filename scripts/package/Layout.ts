/**
 * The installed package's layout: the bundler, the builder, the installer
 * and the test agree on these names (files/*.cjs spell the same paths).
 */
export const PACKAGE_NAME = "prbox"
/** The bundle: entries, shared chunks and the assets modules read next to them. */
export const LIB_DIR = "lib"
/** The bins' shims and the install step. */
export const BIN_DIR = "bin"
/** The SQLite addons (packages/store/src/node/NativeAddon.ts looks here). */
export const NATIVE_DIR = "native"
/** The VS Code extension of the same version. */
export const VSCODE_DIR = "vscode"

/** Bundle entry name → the module it bundles (repository-relative): the full CLI and the daemon. */
export const ENTRIES = {
  prbox: "apps/cli/src/Run.ts",
  prboxd: "apps/daemon/src/main.ts"
} as const

/**
 * How the `prbox` bin starts (apps/cli/src/Start.ts): one CommonJS file, no
 * effect, so `prbox ls` costs little more than Node's own start; it imports
 * the full CLI (`prbox.js`) only when the fast path cannot answer.
 */
export const START = { source: "apps/cli/src/Start.ts", file: "prbox-start.cjs" } as const

/** prbox's SSH server bundled (packages/engine/src/ssh/node/SshBundle.ts reads it next to its chunk). */
export const SSH_SERVER_FILE = "ssh-server.cjs"

/** Each bin's shim (files/ in the repository, bin/ in the package). */
export const BINS = { prbox: "prbox.cjs", prboxd: "prboxd.cjs" } as const

export const tarballName = (version: string): string => `${PACKAGE_NAME}-${version}.tgz`
export const vsixName = (version: string): string => `prbox-vscode-${version}.vsix`

/** Platforms whose prebuilt better-sqlite3 addon ships (Node-API: any Node version); others build one at install. */
export const SHIPPED_ADDON_PLATFORMS: ReadonlyArray<readonly [platform: string, arch: string]> = [
  ["linux", "x64"],
  ["linux", "arm64"],
  ["darwin", "x64"],
  ["darwin", "arm64"]
]

import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { createRequire } from "node:module"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { PRBOX_VERSION } from "@prbox/domain/Version"
import { BUILT_ADDON, shippedAddon } from "@prbox/store/NativeAddon"
import { bundle as bundleExtension, packageVsix } from "../../apps/vscode/scripts/package.ts"
import { bundle } from "./bundle.ts"
import {
  BIN_DIR,
  BINS,
  LIB_DIR,
  NATIVE_DIR,
  PACKAGE_NAME,
  SHIPPED_ADDON_PLATFORMS,
  tarballName,
  VSCODE_DIR,
  vsixName
} from "./Layout.ts"

/**
 * `pnpm run package`: writes dist/prbox-<version>.tgz, the installable
 * package (see Layout.ts for what is inside). Built tarballs are kept by a
 * content key of everything they are made of, so an unchanged tree is never
 * built twice (`ensureTarball`).
 */

const repo = join(import.meta.dirname, "..", "..")
const files = join(import.meta.dirname, "files")
export const DIST = join(repo, "dist")

/** Everything a tarball is made of: the sources bundled, the lockfile (dependencies, esbuild, vsce) and this builder. */
const INPUTS = [
  ":(glob)packages/*/src/**",
  ":(glob)packages/*/package.json",
  ":(glob)apps/*/src/**",
  ":(glob)apps/*/package.json",
  "apps/vscode/scripts",
  "apps/vscode/media",
  "apps/vscode/docs",
  "apps/vscode/README.md",
  "apps/vscode/.vscodeignore",
  ":(glob)scripts/package/*.ts",
  "scripts/package/files",
  "package.json",
  "pnpm-lock.yaml"
]

export const contentKey = (): string => {
  const paths = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ...INPUTS], {
    cwd: repo,
    encoding: "utf8"
  })
    .split("\0")
    .filter((path) => path.length > 0)
    .sort()
  const hash = createHash("sha256").update(PRBOX_VERSION)
  for (const path of paths) {
    const file = join(repo, path)
    hash.update("\0").update(path).update("\0")
    // A tracked file deleted in the work tree is part of the key by its absence.
    if (existsSync(file)) hash.update(readFileSync(file))
  }
  return hash.digest("hex").slice(0, 16)
}

const cacheRoot = (): string =>
  join(process.env.PRBOX_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "prbox"), "package")

/** Copies through a temporary name, so a reader never sees half a tarball. */
const publish = (from: string, to: string): void => {
  mkdirSync(join(to, ".."), { recursive: true })
  const partial = `${to}.${process.pid}.partial`
  copyFileSync(from, partial)
  renameSync(partial, to)
}

const betterSqlite3 = (): { readonly root: string; readonly version: string } => {
  const manifest = createRequire(join(repo, "packages", "store", "package.json")).resolve("better-sqlite3/package.json")
  return {
    root: join(manifest, ".."),
    version: (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version
  }
}

const manifest = (sqliteVersion: string) => ({
  name: PACKAGE_NAME,
  version: PRBOX_VERSION,
  description:
    "Pull request sandboxes: a daemon (prboxd) and a command line (prbox) that open a PR in a container with code-server.",
  license: "UNLICENSED",
  type: "module",
  bin: { prbox: `${BIN_DIR}/${BINS.prbox}`, prboxd: `${BIN_DIR}/${BINS.prboxd}` },
  engines: { node: ">=22.19.0" },
  os: ["linux", "darwin"],
  // Keeps the shipped SQLite addon when it loads, else builds one (files/addon.cjs).
  scripts: { postinstall: `node ${BIN_DIR}/addon.cjs` },
  prbox: { betterSqlite3: sqliteVersion }
})

/** Builds the tarball into `outDir`; returns its path. */
export const buildTarball = async (outDir: string): Promise<string> => {
  const work = mkdtempSync(join(tmpdir(), "prbox-package-"))
  try {
    const pkg = join(work, "package")
    await bundle(repo, join(pkg, LIB_DIR))
    mkdirSync(join(pkg, BIN_DIR))
    for (const file of readdirSync(files).filter((name) => name.endsWith(".cjs"))) {
      copyFileSync(join(files, file), join(pkg, BIN_DIR, file))
    }
    for (const bin of Object.values(BINS)) chmodSync(join(pkg, BIN_DIR, bin), 0o755)
    const sqlite = betterSqlite3()
    mkdirSync(join(pkg, NATIVE_DIR))
    for (const [platform, arch] of SHIPPED_ADDON_PLATFORMS) {
      copyFileSync(
        join(sqlite.root, "prebuilds", `${platform}-${arch}.node`),
        join(pkg, NATIVE_DIR, shippedAddon(platform, arch))
      )
    }
    if (existsSync(join(pkg, NATIVE_DIR, BUILT_ADDON))) throw new Error("the built addon's name is a shipped one's")
    // The extension bundled here, not in apps/vscode/dist, where its own tests bundle it.
    const extension = join(work, "extension.cjs")
    await bundleExtension(extension)
    packageVsix(join(pkg, VSCODE_DIR, vsixName(PRBOX_VERSION)), PRBOX_VERSION, extension)
    copyFileSync(join(files, "README.md"), join(pkg, "README.md"))
    writeFileSync(join(pkg, "package.json"), `${JSON.stringify(manifest(sqlite.version), null, 2)}\n`)
    execFileSync("npm", ["pack", "--pack-destination", work, "--loglevel=error", "--ignore-scripts"], {
      cwd: pkg,
      stdio: ["ignore", "ignore", "inherit"]
    })
    const tarball = join(outDir, tarballName(PRBOX_VERSION))
    publish(join(work, tarballName(PRBOX_VERSION)), tarball)
    return tarball
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** Kept tarballs: the newest few (worktrees and branches build different trees), the rest removed. */
const KEEP_CACHED = 6

const pruneCache = (): void => {
  const entries = readdirSync(cacheRoot()).map((name) => join(cacheRoot(), name))
  const newestFirst = entries.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
  for (const stale of newestFirst.slice(KEEP_CACHED)) rmSync(stale, { recursive: true, force: true })
}

/**
 * dist/prbox-<version>.tgz for the tree as it is: the cached tarball of this
 * content key, built first when there is none.
 */
export const ensureTarball = async (): Promise<string> => {
  const cached = join(cacheRoot(), contentKey(), tarballName(PRBOX_VERSION))
  if (existsSync(cached)) {
    // Used now: the newest for pruning.
    const now = new Date()
    utimesSync(join(cached, ".."), now, now)
  } else {
    await buildTarball(join(cached, ".."))
    pruneCache()
  }
  const tarball = join(DIST, tarballName(PRBOX_VERSION))
  publish(cached, tarball)
  return tarball
}

if (import.meta.main) {
  const started = performance.now()
  const key = contentKey()
  const tarball = join(DIST, tarballName(PRBOX_VERSION))
  publish(await buildTarball(join(cacheRoot(), key)), tarball)
  pruneCache()
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  const mib = (statSync(tarball).size / 1024 / 1024).toFixed(1)
  process.stdout.write(`${tarball} (${mib} MiB, ${seconds} s)\n`)
}

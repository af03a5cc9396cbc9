import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, isAbsolute, join, relative, resolve } from "node:path"
import { sshServerBundle } from "@prbox/engine/node"
import { build } from "esbuild"
import { ENTRIES, NATIVE_DIR, SSH_SERVER_FILE, START } from "./Layout.ts"
import { leanDependencies, optionalAddons } from "./LeanDependencies.ts"

/**
 * The CLI and the daemon as one ESM bundle: shared chunks, and every dynamic
 * `import()` its own chunk (the CLI's fast path relies on it), plus the files
 * modules read through `new URL("./…", import.meta.url)`, copied to the same
 * place relative to the chunks.
 */

/** A `new URL("./…", import.meta.url)` whose string is a relative path: an asset read next to its module. */
const ASSET_REFERENCE = /new URL\(\s*(["'])(\.\.?\/[^"']+)\1\s*,\s*import\.meta\.url\s*\)/g

export const assetReferences = (source: string): Array<string> =>
  Array.from(source.matchAll(ASSET_REFERENCE), (match) => match[2] ?? "")

// CommonJS dependencies bundled into ESM call `require` (node builtins, the addon): give each chunk one.
const REQUIRE_BANNER =
  'import { createRequire as __prboxCreateRequire } from "node:module";const require = __prboxCreateRequire(import.meta.url);'

export interface Bundle {
  /** Every output file, relative to the output directory. */
  readonly outputs: ReadonlyArray<string>
  /** The assets copied, relative to the output directory. */
  readonly assets: ReadonlyArray<string>
}

/**
 * The bin's start (Layout.ts START) as one CommonJS file: no ES module loader
 * and no chunks to resolve before the fast path answers. It must not pull in
 * effect, which would cost the fast path what it exists to save.
 */
const bundleStart = async (repo: string, outdir: string): Promise<string> => {
  const result = await build({
    absWorkingDir: repo,
    entryPoints: [START.source],
    outfile: join(outdir, START.file),
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node22",
    minify: true,
    metafile: true,
    logLevel: "warning"
  })
  const heavy = Object.keys(result.metafile.inputs).filter((input) => /node_modules\/(\.pnpm\/)?effect[@/]/.test(input))
  if (heavy.length > 0) throw new Error(`${START.source} pulls in effect (${heavy[0]}): the fast path must not`)
  return START.file
}

/** Bundles into `outdir` (a directory next to the package's native/). `repo` is the repository root. */
export const bundle = async (repo: string, outdir: string): Promise<Bundle> => {
  const start = await bundleStart(repo, outdir)
  const result = await build({
    absWorkingDir: repo,
    entryPoints: ENTRIES,
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    // Identifiers kept, so functions and classes keep their own names in messages and traces. Not by
    // `keepNames`: its per-function `Object.defineProperty(fn, "name")` turns each of ~6,000 functions into
    // a 256-byte property dictionary, ~1.5 MiB of an idle daemon's heap (more than the longer source costs).
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: false,
    metafile: true,
    logLevel: "warning",
    banner: { js: REQUIRE_BANNER },
    // A package's ESM build first: jsonc-parser's main is a UMD build whose `require`s esbuild cannot see.
    mainFields: ["module", "main"],
    define: {
      // CommonJS dependencies' module-relative paths (ssh2's agent): the chunk's own.
      __dirname: "import.meta.dirname",
      __filename: "import.meta.filename",
      // apps/cli/src/Connect.ts: the CLI starts the bundled daemon.
      PRBOX_BUNDLED_DAEMON: JSON.stringify("./prboxd.js"),
      // packages/store/src/node/NativeAddon.ts: the addons ship beside the bundle.
      PRBOX_BUNDLED_ADDONS: JSON.stringify(`../${NATIVE_DIR}/`),
      // packages/engine/src/ssh/node/SshBundle.ts: the SSH server is bundled here, never by esbuild at run time.
      PRBOX_BUNDLED_SSH_SERVER: JSON.stringify(`./${SSH_SERVER_FILE}`)
    },
    // Only the sources build the SSH server at run time; the package ships it built.
    external: ["esbuild"],
    plugins: [leanDependencies, optionalAddons]
  })
  const assets = new Map<string, string>()
  for (const input of Object.keys(result.metafile.inputs)) {
    const file = resolve(repo, input)
    if (!existsSync(file)) continue
    for (const reference of assetReferences(readFileSync(file, "utf8"))) {
      const source = resolve(dirname(file), reference)
      const target = reference.replace(/^\.\//, "")
      const known = assets.get(target)
      if (target.startsWith("../") || isAbsolute(target)) {
        throw new Error(`${input} reads ${reference}, outside the directory its chunk lands in`)
      }
      if (known !== undefined && known !== source) {
        throw new Error(`two modules read ${target} next to themselves: ${known} and ${source}`)
      }
      assets.set(target, source)
    }
  }
  for (const [target, source] of assets) {
    mkdirSync(dirname(join(outdir, target)), { recursive: true })
    copyFileSync(source, join(outdir, target))
  }
  writeFileSync(join(outdir, SSH_SERVER_FILE), await sshServerBundle())
  return {
    outputs: [
      start,
      SSH_SERVER_FILE,
      ...Object.keys(result.metafile.outputs).map((output) => relative(outdir, resolve(repo, output)))
    ],
    assets: [...assets.keys()]
  }
}

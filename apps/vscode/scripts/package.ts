import { spawnSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { PRBOX_VERSION } from "@prbox/domain/Version"
import { build } from "esbuild"

/**
 * Bundles the extension (one CommonJS file: the VS Code extension host
 * `require`s it; `vscode` is provided by the host) and packages it with vsce.
 * `--bundle-only` stops after the bundle. Prints the .vsix path.
 */
const root = join(import.meta.dirname, "..")
export const VSIX = join(root, "dist", "prbox-vscode.vsix")
const BUNDLE = join(root, "dist", "extension.cjs")

/** Bundles into `outfile` (another place lets a build run beside this package's tests). */
export const bundle = async (outfile: string = BUNDLE): Promise<void> => {
  await build({
    entryPoints: [join(root, "src", "extension.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    // undici is only loaded by a client variant this extension never builds.
    external: ["vscode", "undici"],
    minify: true,
    sourcemap: false,
    logLevel: "warning"
  })
}

/** What the .vsix holds (.vscodeignore says the same): staged so the manifest can carry prbox's version. */
const PACKAGED = ["media", "README.md", "docs/view.png", ".vscodeignore"]

/** Packages `bundled` with vsce as `out`, its manifest stamped with prbox's one version (PRBOX_VERSION). */
export const packageVsix = (out: string = VSIX, version: string = PRBOX_VERSION, bundled: string = BUNDLE): string => {
  const vsce = join(createRequire(import.meta.url).resolve("@vscode/vsce/package.json"), "..", "vsce")
  const stage = mkdtempSync(join(tmpdir(), "prbox-vsix-"))
  try {
    for (const path of PACKAGED) cpSync(join(root, path), join(stage, path), { recursive: true })
    cpSync(bundled, join(stage, "dist", "extension.cjs"))
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, unknown>
    writeFileSync(join(stage, "package.json"), `${JSON.stringify({ ...manifest, version }, null, 2)}\n`)
    mkdirSync(dirname(out), { recursive: true })
    const result = spawnSync(
      process.execPath,
      // Everything is in the bundle: no node_modules in the package, and no repository to link the README to.
      [
        vsce,
        "package",
        "--no-dependencies",
        "--allow-missing-repository",
        "--skip-license",
        "--no-rewrite-relative-links",
        "--out",
        out
      ],
      { cwd: stage, encoding: "utf8" }
    )
    if (result.status !== 0) {
      throw new Error(
        `vsce package failed (${result.signal ?? `exit ${result.status}`}):\n${result.stdout}${result.stderr}`
      )
    }
    return out
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  await bundle()
  if (!process.argv.includes("--bundle-only")) process.stdout.write(`${packageVsix()}\n`)
}

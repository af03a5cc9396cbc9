import { spawnSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { build } from "esbuild"

/**
 * Bundles the extension (one CommonJS file: the VS Code extension host
 * `require`s it; `vscode` is provided by the host) and packages it with vsce.
 * `--bundle-only` stops after the bundle. Prints the .vsix path.
 */
const root = join(import.meta.dirname, "..")
export const VSIX = join(root, "dist", "prbox-vscode.vsix")

export const bundle = async (): Promise<void> => {
  await build({
    entryPoints: [join(root, "src", "extension.ts")],
    outfile: join(root, "dist", "extension.cjs"),
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

export const packageVsix = (): string => {
  const vsce = join(createRequire(import.meta.url).resolve("@vscode/vsce/package.json"), "..", "vsce")
  mkdirSync(join(root, "dist"), { recursive: true })
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
      VSIX
    ],
    { cwd: root, encoding: "utf8" }
  )
  if (result.status !== 0) {
    throw new Error(
      `vsce package failed (${result.signal ?? `exit ${result.status}`}):\n${result.stdout}${result.stderr}`
    )
  }
  return VSIX
}

if (import.meta.main) {
  await bundle()
  if (!process.argv.includes("--bundle-only")) process.stdout.write(`${packageVsix()}\n`)
}

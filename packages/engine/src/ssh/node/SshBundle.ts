import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { RuntimeError } from "../../Errors.ts"

/** The per-connection bootstrap, passed to the sandbox's Node with `-e`. */
export const BOOTSTRAP_FILE = new URL("./server/Bootstrap.cjs", import.meta.url)
const ENTRY = new URL("./server/SshServer.cjs", import.meta.url)

export const bootstrapSource = (): string => readFileSync(BOOTSTRAP_FILE, "utf8")

/**
 * prbox's SSH server and ssh2 as one CommonJS file (Node built-ins only):
 * built once per process with esbuild. ssh2's optional addons stay out: it
 * falls back to pure JavaScript, so any Node in any image runs it.
 */
export const buildBundle = Effect.tryPromise({
  try: async () => {
    const { build } = await import("esbuild")
    const result = await build({
      entryPoints: [fileURLToPath(ENTRY)],
      bundle: true,
      write: false,
      format: "cjs",
      platform: "node",
      target: "node18",
      minify: true,
      logLevel: "silent",
      plugins: [
        {
          name: "optional-addons",
          setup: (builder) => {
            builder.onResolve({ filter: /\.node$/ }, (args) => ({ path: args.path, external: true }))
          }
        }
      ]
    })
    const [output] = result.outputFiles
    if (output === undefined) throw new Error("esbuild gave no output")
    return Buffer.from(output.contents)
  },
  catch: (cause) =>
    new RuntimeError({
      operation: "ssh.bundle",
      detail: `prbox's SSH server could not be built: ${cause instanceof Error ? cause.message : String(cause)}`
    })
})

import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { RuntimeError } from "../../Errors.ts"

/** The per-connection bootstrap, passed to the sandbox's Node with `-e`. */
export const BOOTSTRAP_FILE = new URL("./server/Bootstrap.cjs", import.meta.url)
const ENTRY = new URL("./server/SshServer.cjs", import.meta.url)

export const bootstrapSource = (): string => readFileSync(BOOTSTRAP_FILE, "utf8")

/**
 * prbox's SSH server already bundled, next to this module's chunk: defined by
 * the package's bundler (scripts/package/bundle.ts), which writes it with
 * `sshServerBundle`; undeclared when run from sources.
 */
declare const PRBOX_BUNDLED_SSH_SERVER: string | undefined

/**
 * prbox's SSH server and ssh2 as one CommonJS file (Node built-ins only),
 * made by esbuild. ssh2's optional addons stay out: it falls back to pure
 * JavaScript, so any Node in any image runs it.
 */
export const sshServerBundle = async (): Promise<Uint8Array> => {
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
  return output.contents
}

/** The server's bundle: the installed package's, else built once per process from the sources. */
export const buildBundle = Effect.tryPromise({
  try: async () =>
    Buffer.from(
      typeof PRBOX_BUNDLED_SSH_SERVER === "string"
        ? readFileSync(new URL(PRBOX_BUNDLED_SSH_SERVER, import.meta.url))
        : await sshServerBundle()
    ),
  catch: (cause) =>
    new RuntimeError({
      operation: "ssh.bundle",
      detail: `prbox's SSH server could not be ${typeof PRBOX_BUNDLED_SSH_SERVER === "string" ? "read" : "built"}: ${cause instanceof Error ? cause.message : String(cause)}`
    })
})

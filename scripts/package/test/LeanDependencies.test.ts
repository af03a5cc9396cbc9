import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { build } from "esbuild"
import { afterAll, describe, expect, it } from "vitest"
import { builtinShim, lazySsh, leanDependencies, optionalAddons } from "../LeanDependencies.ts"

const REPO = resolve(import.meta.dirname, "../../..")
const scratch = mkdtempSync(join(tmpdir(), "prbox-lean-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Bundles `source` as the package's bundle does (ESM, node, the plugin) and runs it; its stdout. */
const bundleAndRun = async (name: string, source: string): Promise<string> => {
  const entry = join(scratch, `${name}.mjs`)
  writeFileSync(entry, source)
  const out = join(scratch, `${name}.out.mjs`)
  await build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "silent",
    banner: { js: 'import { createRequire } from "node:module";const require = createRequire(import.meta.url);' },
    plugins: [leanDependencies, optionalAddons]
  })
  return execFileSync(process.execPath, [out], { encoding: "utf8" })
}

const loads = (builtin: string) => `process.moduleLoadList.includes("NativeModule ${builtin}")`

describe("LeanDependencies", () => {
  it("an ESM import of node:http in the bundle does not load Node's fetch (http2)", async () => {
    const output = await bundleAndRun(
      "http",
      `import { createServer, STATUS_CODES } from "node:http"
       import http from "node:http"
       console.log(JSON.stringify({ http2: ${loads("http2")}, createServer: typeof createServer, ok: STATUS_CODES[200], agent: typeof http.globalAgent }))`
    )
    expect(JSON.parse(output)).toEqual({ http2: false, createServer: "function", ok: "OK", agent: "object" })
  })

  it("node:tls imported as ESM loads at its first use, and then works", async () => {
    const output = await bundleAndRun(
      "tls",
      `import * as tls from "node:tls"
       import { connect } from "node:tls"
       const before = ${loads("tls")}
       const socket = new tls.TLSSocket(null)
       console.log(JSON.stringify({ before, after: ${loads("tls")}, socket: socket instanceof tls.TLSSocket, connect: typeof connect }))
       socket.destroy()`
    )
    expect(JSON.parse(output)).toEqual({ before: false, after: true, socket: true, connect: "function" })
  })

  it("the modules that reach ssh2 (SSH into a sandbox, a remote engine), loaded, do not load it nor Node's TLS", async () => {
    const modules = ["packages/engine/src/ssh/node/NodeSsh.ts", "packages/docker/src/node/NodeDocker.ts"]
    const output = await bundleAndRun(
      "ssh",
      `${modules.map((file, i) => `import * as m${i} from ${JSON.stringify(join(REPO, file))}`).join("\n")}
       console.log(JSON.stringify({ loaded: [${modules.map((_, i) => `Object.keys(m${i}).length > 0`).join(", ")}], tls: ${loads("tls")}, https: ${loads("https")} }))`
    )
    expect(JSON.parse(output)).toEqual({ loaded: [true, true], tls: false, https: false })
  })

  it("a code-server health probe loads neither Node's fetch (undici, HTTP/2, workers) nor TLS", async () => {
    const health = JSON.stringify(join(REPO, "packages/engine/src/node/NodeCodeServerHealth.ts"))
    const service = JSON.stringify(join(REPO, "packages/engine/src/CodeServerHealth.ts"))
    const effect = JSON.stringify(join(REPO, "node_modules/effect/dist/index.js"))
    const output = await bundleAndRun(
      "health",
      `import { createServer } from "node:http"
       import { Effect } from ${effect}
       import { CodeServerHealth } from ${service}
       import * as NodeCodeServerHealth from ${health}
       const server = createServer((_, response) => response.end('{"lastHeartbeat":7}'))
       server.listen(0, "127.0.0.1", async () => {
         const probe = Effect.gen(function* () { return yield* (yield* CodeServerHealth).probe(server.address().port) })
         const health = await Effect.runPromise(Effect.provide(probe, NodeCodeServerHealth.layer))
         console.log(JSON.stringify({ health, http2: ${loads("http2")}, tls: ${loads("tls")}, workers: ${loads("worker_threads")} }))
         server.close()
       })`
    )
    expect(JSON.parse(output)).toEqual({ health: { lastHeartbeat: 7 }, http2: false, tls: false, workers: false })
  })

  it("a builtin's getters are left out of its named exports (importing one fails the build)", async () => {
    const shim = builtinShim("http", createRequire(import.meta.url)("node:http"))
    expect(shim).toContain("export const createServer = builtin.createServer;")
    expect(shim).not.toContain("WebSocket")
    await expect(
      bundleAndRun("getter", `import { WebSocket } from "node:http"\nconsole.log(WebSocket)`)
    ).rejects.toThrow(/No matching export/)
  })

  it("docker-modem's ssh agent requires ssh2 only when an ssh:// engine is dialled", () => {
    const path = createRequire(createRequire(join(REPO, "packages/docker/package.json")).resolve("dockerode")).resolve(
      "docker-modem/lib/ssh.js"
    )
    const rewritten = lazySsh(readFileSync(path, "utf8"))
    const [head] = rewritten.split("module.exports")
    expect(head).not.toContain("ssh2")
    expect(rewritten).toContain("new (require('ssh2').Client)()")
    expect(() => lazySsh("var Client = require('ssh2').Client;")).toThrow(/docker-modem's lib\/ssh.js changed/)
  })

  it("no prbox source reaches the stubbed BuildKit session or progress decoder of dockerode", () => {
    // The session runs only for buildImage(…, { version: "2" }); the decoder only for docker.followProgress.
    const sources = ["packages", "apps"].flatMap((top) =>
      readdirSync(join(REPO, top)).flatMap((pkg) => {
        const dir = join(REPO, top, pkg, "src")
        try {
          return readdirSync(dir, { recursive: true, encoding: "utf8" })
            .filter((file) => file.endsWith(".ts"))
            .map((file) => readFileSync(join(dir, file), "utf8"))
        } catch {
          return []
        }
      })
    )
    expect(sources.length).toBeGreaterThan(50)
    for (const source of sources) {
      expect(source).not.toMatch(/version:\s*["']2["']/)
      expect(source).not.toMatch(/\.followProgress\(/)
    }
  })
})

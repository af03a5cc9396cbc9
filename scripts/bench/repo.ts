import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync
} from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"

/**
 * A generated stand-in for a public repository (none is reachable here):
 * thousands of commits over hundreds of files of varied, code-like text, from
 * a seeded PRNG, so every machine builds the same bytes. The bare repository
 * has `main` and `refs/pull/1/head` … `refs/pull/N/head`, each PR a few
 * commits on top of a recent main commit. It is cached under
 * `$PRBOX_CACHE/bench/`, keyed by the parameters below.
 */
export interface RepoParameters {
  readonly seed: number
  readonly commits: number
  readonly files: number
  readonly pullRequests: number
}

export const DEFAULT_REPO: RepoParameters = { seed: 20240101, commits: 4000, files: 800, pullRequests: 40 }

/** Bumped whenever the generator's output changes for the same parameters. */
const GENERATOR_VERSION = 1

export interface BenchRepo {
  readonly path: string
  readonly parameters: RepoParameters
  readonly packBytes: number
  readonly commits: number
  readonly pullRequests: number
  readonly generated: true
  /** False when the cached copy was reused. */
  readonly builtNow: boolean
  readonly buildMs: number
}

const cacheRoot = (): string =>
  process.env.PRBOX_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "prbox")

/** mulberry32: small, fast, and the same everywhere. */
const prng = (seed: number) => {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number): number => Math.floor(next() * n)
  const pick = <A>(items: ReadonlyArray<A>): A => items[int(items.length)] as A
  return { next, int, pick }
}

type Rng = ReturnType<typeof prng>

const SYLLABLES =
  "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga ge go gu ha he hi ho ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo za ze zi zo str tr pl gr kl sn".split(
    " "
  )

const vocabulary = (rng: Rng, size: number): Array<string> =>
  Array.from({ length: size }, () => Array.from({ length: 1 + rng.int(3) }, () => rng.pick(SYLLABLES)).join(""))

const KEYWORDS = ["const", "let", "return", "if", "for", "await", "yield*", "export const", "throw new", "case"]
const EXTENSIONS = [".ts", ".ts", ".ts", ".md", ".json", ".css", ".sql", ".csv"]
const VERBS = ["fix", "add", "refactor", "rename", "document", "test", "speed up", "simplify", "remove", "handle"]

const hex = (rng: Rng, digits: number): string => {
  let out = ""
  for (let i = 0; i < digits; i++) out += "0123456789abcdef"[rng.int(16)]
  return out
}

/** A line of code-like text: words from the vocabulary, numbers and hex ids (which barely compress). */
const line = (rng: Rng, words: ReadonlyArray<string>, ext: string): string => {
  const ident = () => {
    const a = rng.pick(words)
    const b = rng.pick(words)
    return rng.next() < 0.5 ? `${a}${b.charAt(0).toUpperCase()}${b.slice(1)}` : `${a}_${b}`
  }
  const phrase = () => Array.from({ length: 2 + rng.int(6) }, () => rng.pick(words)).join(" ")
  switch (ext) {
    case ".md":
      return rng.next() < 0.1 ? `## ${phrase()}` : `${phrase()} ${phrase()} (${hex(rng, 12)}) ${phrase()}.`
    case ".json":
      return `  "${ident()}": { "id": "${hex(rng, 24)}", "n": ${rng.int(1_000_000)}, "tag": "${rng.pick(words)}" },`
    case ".csv":
      return `${rng.int(100_000)},${ident()},${hex(rng, 16)},${(rng.next() * 1000).toFixed(3)},${rng.pick(words)}`
    case ".css":
      return `.${ident()} { margin: ${rng.int(40)}px; color: #${hex(rng, 6)}; /* ${hex(rng, 8)} */ }`
    case ".sql":
      return `insert into ${ident()} values ('${hex(rng, 20)}', ${rng.int(99_999)}, '${phrase()}');`
    default: {
      const indent = "  ".repeat(rng.int(4))
      return `${indent}${rng.pick(KEYWORDS)} ${ident()} = ${ident()}(${rng.int(10_000)}, "${phrase()}", 0x${hex(rng, 10)})`
    }
  }
}

interface Person {
  readonly name: string
  readonly email: string
}

/** Writes the fast-import stream for the whole history to `sink`. */
const history = (parameters: RepoParameters, write: (chunk: string) => void): void => {
  const rng = prng(parameters.seed)
  const words = vocabulary(rng, 3000)
  const people: Array<Person> = Array.from({ length: 24 }, () => {
    const first = rng.pick(words)
    const last = rng.pick(words)
    return { name: `${first} ${last}`, email: `${first}.${last}@example.invalid` }
  })
  const dirs = Array.from(
    { length: 40 },
    () => `${rng.pick(["src", "lib", "docs", "test", "data"])}/${rng.pick(words)}`
  )
  const newFile = (): [string, Array<string>] => {
    const ext = rng.pick(EXTENSIONS)
    const path = `${rng.pick(dirs)}/${rng.pick(words)}_${hex(rng, 4)}${ext}`
    return [path, Array.from({ length: 20 + rng.int(120) }, () => line(rng, words, ext))]
  }
  const extOf = (path: string): string => path.slice(path.lastIndexOf("."))

  let time = Date.UTC(2019, 0, 1) / 1000
  let mark = 0
  const commit = (
    ref: string,
    from: number | undefined,
    message: string,
    changes: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
  ): number => {
    mark += 1
    time += 60 + rng.int(6 * 3600)
    const who = rng.pick(people)
    const text = `${message}\n`
    write(`commit ${ref}\nmark :${mark}\n`)
    write(`author ${who.name} <${who.email}> ${time} +0000\ncommitter ${who.name} <${who.email}> ${time} +0000\n`)
    write(`data ${Buffer.byteLength(text)}\n${text}`)
    if (from !== undefined) write(`from :${from}\n`)
    for (const [path, lines] of changes) {
      const content = `${lines.join("\n")}\n`
      write(`M 100644 inline ${path}\ndata ${Buffer.byteLength(content)}\n${content}\n`)
    }
    write("\n")
    return mark
  }

  /** One edit of a file: insert, replace or delete a block, keeping files at a few hundred lines. */
  const edit = (path: string, lines: ReadonlyArray<string>): Array<string> => {
    const next = [...lines]
    const at = rng.int(next.length + 1)
    const size = 3 + rng.int(30)
    const fresh = () => Array.from({ length: size }, () => line(rng, words, extOf(path)))
    const roll = rng.next()
    if (next.length > 300 || (roll < 0.2 && next.length > 40)) next.splice(at, size)
    else if (roll < 0.6) next.splice(at, 0, ...fresh())
    else next.splice(at, size, ...fresh())
    return next
  }

  const files = new Map<string, Array<string>>()
  for (let i = 0; i < parameters.files; i++) {
    const [path, lines] = newFile()
    files.set(path, lines)
  }
  let head = commit("refs/heads/main", undefined, "initial import", [...files.entries()])
  const paths = () => [...files.keys()]
  // A few files are hot (edited often), most are edited now and then.
  let hot = paths().slice(0, 30)
  const snapshots = new Map<number, Map<string, Array<string>>>()
  const baseFrom = parameters.commits - Math.max(parameters.pullRequests * 3, 100)
  for (let i = 1; i < parameters.commits; i++) {
    const changes: Array<[string, Array<string>]> = []
    const touched = 1 + rng.int(5)
    for (let j = 0; j < touched; j++) {
      if (rng.next() < 0.02) {
        const [path, lines] = newFile()
        files.set(path, lines)
        changes.push([path, lines])
        continue
      }
      const path = rng.next() < 0.5 ? rng.pick(hot) : rng.pick(paths())
      const lines = edit(path, files.get(path) ?? [])
      files.set(path, lines)
      changes.push([path, lines])
    }
    if (i % 500 === 0) hot = paths().filter(() => rng.next() < 0.05)
    const message = `${rng.pick(dirs).split("/")[1]}: ${rng.pick(VERBS)} ${rng.pick(words)} ${rng.pick(words)} (#${i})`
    head = commit("refs/heads/main", head, message, changes)
    if (i >= baseFrom) snapshots.set(head, new Map(files))
  }
  const bases = [...snapshots.keys()]
  for (let pr = 1; pr <= parameters.pullRequests; pr++) {
    const base = rng.pick(bases)
    const state = new Map(snapshots.get(base))
    let tip = base
    const ref = `refs/pull/${pr}/head`
    const count = 1 + rng.int(4)
    for (let c = 0; c < count; c++) {
      const changes: Array<[string, Array<string>]> = []
      for (let j = 0; j < 1 + rng.int(4); j++) {
        const path = rng.pick([...state.keys()])
        const lines = edit(path, state.get(path) ?? [])
        state.set(path, lines)
        changes.push([path, lines])
      }
      tip = commit(ref, tip, `pr ${pr}: ${rng.pick(VERBS)} ${rng.pick(words)} ${rng.pick(words)}`, changes)
    }
  }
}

const git = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()

const packBytesOf = (repo: string): number => {
  const dir = join(repo, "objects", "pack")
  return readdirSync(dir)
    .filter((file) => file.endsWith(".pack"))
    .reduce((sum, file) => sum + statSync(join(dir, file)).size, 0)
}

const build = (parameters: RepoParameters, destination: string, log: (line: string) => void): void => {
  const temporary = `${destination}.tmp-${process.pid}`
  const stream = `${temporary}.fast-import`
  rmSync(temporary, { recursive: true, force: true })
  try {
    mkdirSync(temporary, { recursive: true })
    git(temporary, "init", "--bare", "--quiet", "--initial-branch=main")
    log("generating history ...")
    const fd = openSync(stream, "w")
    try {
      let pending: Array<string> = []
      let size = 0
      history(parameters, (chunk) => {
        pending.push(chunk)
        size += chunk.length
        if (size > 1 << 20) {
          writeSync(fd, pending.join(""))
          pending = []
          size = 0
        }
      })
      writeSync(fd, `${pending.join("")}done\n`)
    } finally {
      closeSync(fd)
    }
    log("git fast-import ...")
    const input = openSync(stream, "r")
    try {
      execFileSync("git", ["fast-import", "--quiet", "--done"], { cwd: temporary, stdio: [input, "ignore", "inherit"] })
    } finally {
      closeSync(input)
    }
    log("git repack ...")
    git(temporary, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=50")
    git(temporary, "pack-refs", "--all")
    git(temporary, "symbolic-ref", "HEAD", "refs/heads/main")
    rmSync(destination, { recursive: true, force: true })
    renameSync(temporary, destination)
  } finally {
    rmSync(temporary, { recursive: true, force: true })
    rmSync(stream, { force: true })
  }
}

/** The cached bare repository for `parameters`, generated first when missing. */
export const benchRepo = async (
  parameters: RepoParameters = DEFAULT_REPO,
  log: (line: string) => void = () => {}
): Promise<BenchRepo> => {
  const key = createHash("sha256")
    .update(JSON.stringify({ version: GENERATOR_VERSION, ...parameters }))
    .digest("hex")
    .slice(0, 16)
  const dir = join(cacheRoot(), "bench")
  const path = join(dir, `repo-${key}.git`)
  const infoFile = join(path, "prbox-bench.json")
  mkdirSync(dir, { recursive: true })
  let builtNow = false
  let buildMs = 0
  if (!existsSync(infoFile)) {
    const started = performance.now()
    log(`generating a repository (${JSON.stringify(parameters)}) into ${path}`)
    build(parameters, path, log)
    buildMs = performance.now() - started
    builtNow = true
    writeFileSync(infoFile, `${JSON.stringify({ parameters, generatorVersion: GENERATOR_VERSION }, null, 2)}\n`)
  }
  const commits = Number(git(path, "rev-list", "--count", "main"))
  const pullRequests = git(path, "for-each-ref", "--format=%(refname)", "refs/pull/").split("\n").length
  return {
    path,
    parameters,
    packBytes: packBytesOf(path),
    commits,
    pullRequests,
    generated: true,
    builtNow,
    buildMs
  }
}

// The repositories `pnpm bench warm` opens: a bare copy of the given one
// (its own refs/pull/N/head where they fit, made where it has too few), and a
// "prebuilt" copy whose base gains a devcontainer.json with an expensive,
// stamp-guarded updateContentCommand.
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { sh } from "./common.ts"
import { type PullRequestCandidate, planPullRequests } from "./warm-plan.ts"

/** A PR the bench opens, and a file of it that the opened workspace must hold. */
export interface BenchPullRequest {
  readonly number: number
  readonly head: string
  readonly file: string
  readonly content: Buffer
  /** True when the bench made it (a commit on the base). */
  readonly made: boolean
}

export interface WarmRepo {
  readonly path: string
  readonly baseBranch: string
  readonly pullRequests: ReadonlyArray<BenchPullRequest>
}

/** How many of the newest PRs are looked at: enough to find `count` near the base, few enough to stay quick. */
const LOOKED_AT_PER_WANTED = 4

const gitIn = (repo: string, ...args: ReadonlyArray<string>) => sh("git", ["--git-dir", repo, ...args])

const IDENTITY = ["-c", "user.name=prbox bench", "-c", "user.email=bench@prbox.invalid", "-c", "commit.gpgsign=false"]

const candidateOf = async (repo: string, base: string, number: number): Promise<PullRequestCandidate> => {
  const head = `refs/pull/${number}/head`
  const [behind = "0", ahead = "0"] = (
    await gitIn(repo, "rev-list", "--left-right", "--count", `${base}...${head}`)
  ).split(/\s+/)
  const own = await gitIn(repo, "ls-tree", "--name-only", head, ".devcontainer", ".devcontainer.json")
  const forkPoint = await gitIn(repo, "merge-base", base, head)
  const changed = await gitIn(repo, "diff", "--name-only", "--diff-filter=AM", "--no-renames", forkPoint, head)
  return {
    number,
    ahead: Number(ahead),
    behind: Number(behind),
    ownEnvironment: own.length > 0,
    changedFile: changed.split("\n").find((path) => path.length > 0) ?? null
  }
}

const pullRequestOf = async (repo: string, number: number, file: string, made: boolean): Promise<BenchPullRequest> => {
  const head = await gitIn(repo, "rev-parse", `refs/pull/${number}/head`)
  // The blob's bytes as they are (sh trims its output).
  const content = execFileSync("git", ["--git-dir", repo, "cat-file", "blob", `${head}:${file}`])
  return { number, head, file, content, made }
}

/** `files` written into the work tree and committed with the bench's identity. */
const commitFiles = async (work: string, files: Readonly<Record<string, string>>, message: string) => {
  for (const [path, text] of Object.entries(files)) {
    await sh("mkdir", ["-p", join(work, path, "..")])
    writeFileSync(join(work, path), text)
  }
  await sh("git", ["-C", work, "add", "--", ...Object.keys(files)])
  await sh("git", ["-C", work, ...IDENTITY, "commit", "--quiet", "--no-verify", "-m", message])
}

/** PRs `numbers`, each one commit on the base adding `bench/pr-<n>.md`, pushed to refs/pull/<n>/head. */
const makePullRequests = async (repo: string, work: string, baseBranch: string, numbers: ReadonlyArray<number>) => {
  for (const n of numbers) {
    await sh("git", ["-C", work, "checkout", "--quiet", "--detach", `origin/${baseBranch}`])
    await commitFiles(work, { [`bench/pr-${n}.md`]: `# PR ${n}\n\nA change the warm bench made.\n` }, `bench: PR ${n}`)
    await sh("git", ["-C", work, "push", "--quiet", "origin", `HEAD:refs/pull/${n}/head`])
  }
  return Promise.all(numbers.map((n) => pullRequestOf(repo, n, `bench/pr-${n}.md`, true)))
}

/** A work tree of `repo` (for the bench's own commits), checked out at nothing yet. */
const workTree = async (repo: string, dir: string) => {
  await sh("git", ["clone", "--quiet", "--no-checkout", repo, dir])
  return dir
}

/**
 * The base branch given `files` in one commit, pushed from the work tree
 * to its origin, and its `origin/<base>` moved to it.
 */
const commitOnBase = async (work: string, baseBranch: string, files: Record<string, string>, message: string) => {
  await sh("git", ["-C", work, "checkout", "--quiet", "--detach", `origin/${baseBranch}`])
  await commitFiles(work, files, message)
  await sh("git", ["-C", work, "push", "--quiet", "origin", `HEAD:refs/heads/${baseBranch}`])
  await sh("git", ["-C", work, "fetch", "--quiet", "origin"])
}

/**
 * A bare copy of `source` with every ref (`--mirror`, so its refs/pull/N/head
 * too) in `dir`, as it is (no devcontainer.json added: the config's image,
 * no create-time steps, as most repositories), and `count` PRs for the
 * bench: its own newest ones that keep the base's environment and sit near
 * it, the rest made.
 */
export const prepareRemote = async (source: string, dir: string, count: number): Promise<WarmRepo> => {
  const path = join(dir, "remote.git")
  await sh("git", ["clone", "--quiet", "--mirror", "--no-local", source, path])
  const baseBranch = (await gitIn(path, "symbolic-ref", "--short", "HEAD")).trim()
  const numbers = (await gitIn(path, "for-each-ref", "--format=%(refname)", "refs/pull/"))
    .split("\n")
    .map((ref) => /^refs\/pull\/(\d+)\/head$/.exec(ref)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => b - a)
  const candidates: Array<PullRequestCandidate> = []
  for (const n of numbers.slice(0, count * LOOKED_AT_PER_WANTED))
    candidates.push(await candidateOf(path, baseBranch, n))
  const plan = planPullRequests(candidates, count, numbers[0] ?? 0)
  const byNumber = new Map(candidates.map((c) => [c.number, c]))
  const work = await workTree(path, join(dir, "work"))
  const own = await Promise.all(plan.use.map((n) => pullRequestOf(path, n, byNumber.get(n)?.changedFile ?? "", false)))
  const made = await makePullRequests(path, work, baseBranch, plan.make)
  return { path, baseBranch, pullRequests: [...own, ...made] }
}

/** The lockfile of the prebuilt repository and what its updateContentCommand leaves. */
export const PREBUILT = {
  lockfile: "deps.lock",
  stamp: ".deps-stamp",
  installed: "deps/installed",
  sleepSeconds: 30
} as const

/**
 * A devcontainer.json on `image` whose updateContentCommand "installs" (sleeps
 * 30 s, then writes deps/installed and the stamp) only when deps.lock's hash
 * differs from the stamp it left in the workspace.
 */
export const prebuiltDevcontainer = (image: string): string =>
  `${JSON.stringify(
    {
      name: "prbox warm bench: dependencies installed when the lockfile changed",
      image,
      updateContentCommand:
        `h=$(sha256sum ${PREBUILT.lockfile} | cut -d' ' -f1); ` +
        `if [ "$(cat ${PREBUILT.stamp} 2>/dev/null)" != "$h" ]; then ` +
        `sleep ${PREBUILT.sleepSeconds} && mkdir -p deps && echo "$h" > ${PREBUILT.installed} && echo "$h" > ${PREBUILT.stamp}; fi`
    },
    null,
    2
  )}\n`

/**
 * A bare copy of `source`'s branches in `dir` whose base branch gains the
 * devcontainer.json above and a lockfile, with `count` PRs made on it (none
 * changes the lockfile). Returns it and the lockfile's hash.
 */
export const preparePrebuiltRemote = async (
  source: string,
  dir: string,
  image: string,
  count: number
): Promise<WarmRepo & { readonly lockHash: string }> => {
  const path = join(dir, "prebuilt.git")
  await sh("git", ["clone", "--quiet", "--bare", "--no-local", source, path])
  const baseBranch = (await gitIn(path, "symbolic-ref", "--short", "HEAD")).trim()
  const work = await workTree(path, join(dir, "prebuilt-work"))
  const lock = "# dependencies, pinned\nleft-pad 1.3.0 sha512-2b2b\nexpress-bench 0.0.1 sha512-7a7a\n"
  await commitOnBase(
    work,
    baseBranch,
    { ".devcontainer/devcontainer.json": prebuiltDevcontainer(image), [PREBUILT.lockfile]: lock },
    "bench: a devcontainer whose updateContentCommand installs when deps.lock changed"
  )
  const numbers = Array.from({ length: count }, (_, i) => i + 1)
  const pullRequests = await makePullRequests(path, work, baseBranch, numbers)
  const lockHash = (await sh("sha256sum", [join(work, PREBUILT.lockfile)])).split(" ")[0] ?? ""
  return { path, baseBranch, pullRequests, lockHash }
}

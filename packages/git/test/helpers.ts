import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Git, NodeGit, NodeWorkspaces, type PullRequestRef, Workspaces } from "../src/index.ts"

// Tests never read the machine's git configuration.
export const isolatedEnv = {
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "prbox test",
  GIT_AUTHOR_EMAIL: "test@prbox.invalid",
  GIT_COMMITTER_NAME: "prbox test",
  GIT_COMMITTER_EMAIL: "test@prbox.invalid",
  GIT_AUTHOR_DATE: "2024-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2024-01-01T00:00:00Z",
  LC_ALL: "C"
}

export const gitSync = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", args, { cwd, env: { ...process.env, ...isolatedEnv }, encoding: "utf8", stdio: "pipe" }).trim()

/** A temporary directory, removed when the test's scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(NodePath.join(tmpdir(), "prbox-git-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

export interface TestRemote {
  readonly path: string
  readonly main: string
  readonly pr1: string
  readonly pr2: string
  readonly mr3: string
}

/**
 * A bare repository laid out like a code host's: `main`, `refs/pull/1/head`,
 * `refs/pull/2/head` and `refs/merge-requests/3/head`, each its own commit.
 */
export const makeRemote = (root: string, name = "remote"): TestRemote => {
  const work = NodePath.join(root, `${name}-work`)
  const path = NodePath.join(root, `${name}.git`)
  gitSync(root, "init", "--quiet", "--initial-branch=main", work)
  const commit = (file: string, from?: string): string => {
    if (from !== undefined) gitSync(work, "checkout", "--quiet", "--detach", from)
    execFileSync("sh", ["-c", `echo ${file} > ${file}`], { cwd: work })
    gitSync(work, "add", file)
    gitSync(work, "commit", "--quiet", "-m", file)
    return gitSync(work, "rev-parse", "HEAD")
  }
  const main = commit("README.md")
  const pr1 = commit("pr1.txt", main)
  const pr2 = commit("pr2.txt", main)
  const mr3 = commit("mr3.txt", main)
  gitSync(root, "init", "--quiet", "--bare", "--initial-branch=main", path)
  gitSync(
    work,
    "push",
    "--quiet",
    path,
    `${pr1}:refs/pull/1/head`,
    `${pr2}:refs/pull/2/head`,
    `${mr3}:refs/merge-requests/3/head`,
    `${main}:refs/heads/main`
  )
  return { path, main, pr1, pr2, mr3 }
}

/**
 * Pushes `refs/pull/<pr>/head` to the bare remote `path`: one commit on top of
 * `base` (a ref or commit of the remote) with `files` (path → content; a `{ link }` is a symbolic link,
 * an `{ executable }` a file with mode 0755).
 * Returns the commit.
 */
export const pushPullRequest = (
  path: string,
  pr: number,
  files: Readonly<Record<string, string | Uint8Array | { readonly link: string } | { readonly executable: string }>>,
  base = "main"
): string => {
  const work = mkdtempSync(NodePath.join(tmpdir(), "prbox-pr-"))
  try {
    gitSync(work, "init", "--quiet", "--initial-branch=main")
    gitSync(work, "fetch", "--quiet", path, base)
    gitSync(work, "checkout", "--quiet", "FETCH_HEAD")
    for (const [file, content] of Object.entries(files)) {
      const target = NodePath.join(work, file)
      mkdirSync(NodePath.dirname(target), { recursive: true })
      if (typeof content === "string" || content instanceof Uint8Array) writeFileSync(target, content)
      else if ("executable" in content) writeFileSync(target, content.executable, { mode: 0o755 })
      else symlinkSync(content.link, target)
    }
    gitSync(work, "add", "-A")
    gitSync(work, "commit", "--quiet", "--allow-empty", "-m", `pull request ${pr}`)
    gitSync(work, "push", "--quiet", "--force", path, `HEAD:refs/pull/${pr}/head`)
    return gitSync(work, "rev-parse", "HEAD")
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/**
 * Moves `refs/pull/1/head` of the remote `makeRemote(root)` made to a new
 * commit (adding `file`) on top of `from`: a push when `from` is the PR's
 * head, a force-push otherwise. Returns the new head.
 */
export const movePullRequest = (root: string, from: string, file: string, name = "remote"): string => {
  const work = NodePath.join(root, `${name}-work`)
  gitSync(work, "checkout", "--quiet", "--detach", from)
  writeFileSync(NodePath.join(work, file), `${file}\n`)
  gitSync(work, "add", file)
  gitSync(work, "commit", "--quiet", "-m", file)
  const commit = gitSync(work, "rev-parse", "HEAD")
  gitSync(work, "push", "--quiet", "--force", NodePath.join(root, `${name}.git`), `${commit}:refs/pull/1/head`)
  return commit
}

export type GitRun = Git["Service"]["run"]

/** Real git, isolated from the machine's configuration; `wrap` may observe or alter each call. */
export const testGit = (wrap: (run: GitRun) => GitRun = (run) => run): Layer.Layer<Git> =>
  Layer.effect(
    Git,
    Effect.gen(function* () {
      const real = yield* Git
      return Git.of({
        run: wrap((args, options) => real.run(args, { ...options, env: { ...isolatedEnv, ...options.env } }))
      })
    })
  ).pipe(Layer.provide(NodeGit.layer))

export const workspacesLayer = (stateDir: string, git: Layer.Layer<Git> = testGit()) =>
  NodeWorkspaces.layer({ stateDir }).pipe(Layer.provide(Layer.mergeAll(git, NodeFileSystem.layer)))

/** Refs of a repository under `prefix`, `name sha` per line. */
export const refsOf = (gitDir: string, prefix = "refs/"): Array<string> =>
  gitSync(gitDir, `--git-dir=${gitDir}`, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    .split("\n")
    .filter((line) => line !== "")

export const fetchPullRequest = (ref: PullRequestRef, onProgress?: (line: string) => Effect.Effect<void>) =>
  Workspaces.use((w) => w.fetchPullRequest(ref, onProgress === undefined ? {} : { onProgress }))

import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Result } from "effect"
import { NodeWorkspaces, type PullRequestRef, parsePullRequestRef, Workspaces } from "../src/index.ts"
import {
  fetchPullRequest,
  type GitRun,
  gitSync,
  makeRemote,
  refsOf,
  tempDir,
  testGit,
  workspacesLayer
} from "./helpers.ts"

const refOf = (input: string, pr: number): PullRequestRef => Result.getOrThrow(parsePullRequestRef(input, { pr }))

/** Real git whose subcommands are recorded in `commands`. */
const recordingGit = (commands: Array<string>, wrap: (run: GitRun) => GitRun = (run) => run) =>
  testGit((run) => (args, options) => {
    commands.push(args.find((arg) => !arg.startsWith("-")) ?? "")
    return wrap(run)(args, options)
  })

describe("a new mirror is a clone of the remote's default branch", () => {
  it.effect("its branch kept as a base (no refs/heads), origin's URL alone in its config", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const lines: Array<string> = []
      const commands: Array<string> = []
      const destination = NodePath.join(root, "ws")
      const { fetched, diff, diffCommands } = yield* Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const fetched = yield* workspaces.fetchPullRequest(refOf(remote.path, 1), {
          onProgress: (line) => Effect.sync(() => void lines.push(line))
        })
        yield* workspaces.createWorkspace({
          mirrorPath: fetched.mirrorPath,
          commit: fetched.commit,
          destination,
          originUrl: "https://github.com/o/r.git",
          branchName: "pr-1"
        })
        commands.length = 0
        const diff = yield* workspaces.diffAgainstBase(fetched.mirrorPath, fetched.commit, { paths: [], stat: true })
        return { fetched, diff, diffCommands: [...commands] }
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"), recordingGit(commands))))

      const mirror = fetched.mirrorPath
      assert.strictEqual(fetched.commit, remote.pr1)
      assert.deepStrictEqual(refsOf(mirror, "refs/heads/"), [])
      assert.deepStrictEqual(refsOf(mirror, "refs/prbox/base/"), [
        `refs/prbox/base/HEAD ${remote.main}`,
        `refs/prbox/base/main ${remote.main}`
      ])
      assert.strictEqual(
        gitSync(mirror, `--git-dir=${mirror}`, "symbolic-ref", "refs/prbox/base/HEAD"),
        "refs/prbox/base/main"
      )
      assert.strictEqual(
        gitSync(mirror, `--git-dir=${mirror}`, "config", "--get-regexp", "^remote\\."),
        `remote.origin.url ${remote.path}`
      )
      gitSync(mirror, `--git-dir=${mirror}`, "fsck", "--strict", "--no-dangling")
      // git's own progress came through, as the fetch's does.
      assert.isTrue(lines.some((line) => line.startsWith("Cloning into bare repository")))
      // A workspace gets no remote-tracking branch from the mirror.
      assert.deepStrictEqual(refsOf(NodePath.join(destination, ".git"), "refs/remotes/"), [])
      assert.strictEqual(gitSync(destination, "branch", "--all", "--format=%(refname)"), "refs/heads/pr-1")
      // The base diff finds the default branch without asking the remote.
      assert.strictEqual(diff.baseBranch, "main")
      assert.strictEqual(diff.mergeBase, remote.main)
      assert.notInclude(diffCommands, "ls-remote")
      assert.notInclude(diffCommands, "fetch")
    })
  )

  it.effect("a remote without branches: an empty clone, then the pull request's fetch", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const bare = NodePath.join(root, "no-branches.git")
      gitSync(root, "init", "--quiet", "--bare", "--initial-branch=main", bare)
      gitSync(root, `--git-dir=${remote.path}`, "push", "--quiet", bare, "refs/pull/1/head:refs/pull/1/head")
      const fetched = yield* fetchPullRequest(refOf(bare, 1)).pipe(
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(fetched.commit, remote.pr1)
      assert.deepStrictEqual(refsOf(fetched.mirrorPath), [`refs/prbox/pr/1 ${remote.pr1}`])
    })
  )

  it.effect("a remote whose HEAD names no branch: no base, the pull request fetched", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      gitSync(root, `--git-dir=${remote.path}`, "symbolic-ref", "HEAD", "refs/heads/trunk")
      const fetched = yield* fetchPullRequest(refOf(remote.path, 2)).pipe(
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(fetched.commit, remote.pr2)
      assert.deepStrictEqual(refsOf(fetched.mirrorPath), [`refs/prbox/pr/2 ${remote.pr2}`])
    })
  )

  it.effect("an empty remote: the mirror is made, the pull request is not found", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const bare = NodePath.join(root, "empty.git")
      gitSync(root, "init", "--quiet", "--bare", bare)
      const error = yield* fetchPullRequest(refOf(bare, 1)).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "PullRequestNotFound")
    })
  )
})

describe("a clone that fails leaves nothing", () => {
  const mirrorsOf = (root: string) => NodePath.join(root, "state", "mirrors", "local")

  it.effect("a missing repository is RepositoryNotFound", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const error = yield* fetchPullRequest(refOf(NodePath.join(root, "nowhere.git"), 1)).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "RepositoryNotFound")
      assert.strictEqual(error._tag === "RepositoryNotFound" && error.operation, "git clone")
      assert.deepStrictEqual(readdirSync(mirrorsOf(root)), [])
    })
  )

  it.effect("a pull request missing from a new mirror's remote is PullRequestNotFound", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const error = yield* fetchPullRequest(refOf(remote.path, 9)).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "PullRequestNotFound")
      // The mirror stays (it is a cache of the remote); nothing half-made beside it.
      assert.lengthOf(readdirSync(mirrorsOf(root)), 1)
      assert.notMatch(readdirSync(mirrorsOf(root))[0] ?? "", /\.tmp-/)
    })
  )

  it.effect("a clone whose refs are not what git writes is refused, the clone removed", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const garbled = testGit((run) => (args, options) => {
        const target = args.at(-1) ?? ""
        return run(args, options).pipe(
          Effect.tap(() =>
            Effect.sync(() => {
              if (args[0] === "clone") writeFileSync(NodePath.join(target, "packed-refs"), "garbage\n")
            })
          )
        )
      })
      const error = yield* fetchPullRequest(refOf(remote.path, 1)).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state"), garbled))
      )
      assert.strictEqual(error._tag, "GitCommandFailed")
      assert.include(error.message, "packed-refs")
      assert.deepStrictEqual(readdirSync(mirrorsOf(root)), [])
    })
  )

  // An ssh "server" that never answers: the clone waits until it is stopped.
  const hangingGit = testGit(
    (run) => (args, options) => run(args, { ...options, env: { ...options.env, GIT_SSH_COMMAND: "cat >/dev/null #" } })
  )
  const hanging = refOf("ssh://git.invalid/o/r.git", 1)

  it.live("one interrupted midway", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const started = yield* Deferred.make<void>()
      yield* Effect.gen(function* () {
        const fiber = yield* fetchPullRequest(hanging, (line) =>
          line.startsWith("Cloning into") ? Deferred.succeed(started, undefined) : Effect.void
        ).pipe(Effect.forkChild)
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"), hangingGit)), Effect.timeout("20 seconds"))
      const host = NodePath.join(root, "state", "mirrors", "git.invalid")
      assert.deepStrictEqual(readdirSync(host), [])
    })
  )

  it.live("one out of time is GitTimeout", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const layer = NodeWorkspaces.layer({ stateDir: NodePath.join(root, "state"), fetchTimeoutMs: 300 }).pipe(
        Layer.provide(Layer.mergeAll(hangingGit, NodeFileSystem.layer))
      )
      const error = yield* fetchPullRequest(hanging).pipe(Effect.flip, Effect.provide(layer))
      assert.strictEqual(error._tag, "GitTimeout")
      assert.include(error.message, "git clone")
      assert.deepStrictEqual(readdirSync(NodePath.join(root, "state", "mirrors", "git.invalid")), [])
    })
  )
})

describe("the fetched commit, read from FETCH_HEAD", () => {
  it.effect("is the pull request's head, without a git process when it is a loose commit", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const commands: Array<string> = []
      const fetched = yield* Effect.gen(function* () {
        yield* fetchPullRequest(refOf(remote.path, 1))
        commands.length = 0
        return yield* fetchPullRequest(refOf(remote.path, 2))
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"), recordingGit(commands))))
      assert.strictEqual(fetched.commit, gitSync(root, `--git-dir=${remote.path}`, "rev-parse", "refs/pull/2/head"))
      assert.deepStrictEqual(commands, ["fetch"])
    })
  )

  it.effect("an annotated tag as the pull request's head: its commit, never the tag", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const work = NodePath.join(root, "remote-work")
      gitSync(work, "tag", "--annotate", "--message=release", "v1", remote.pr2)
      gitSync(work, "push", "--quiet", remote.path, "refs/tags/v1:refs/pull/7/head")
      const tag = gitSync(root, `--git-dir=${remote.path}`, "rev-parse", "refs/pull/7/head")
      assert.notStrictEqual(tag, remote.pr2)
      const fetched = yield* fetchPullRequest(refOf(remote.path, 7)).pipe(
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(fetched.commit, remote.pr2)
    })
  )

  it.effect("a head already packed in the mirror (the default branch's tip) is asked of git", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      gitSync(root, `--git-dir=${remote.path}`, "update-ref", "refs/pull/8/head", remote.main)
      const commands: Array<string> = []
      const fetched = yield* fetchPullRequest(refOf(remote.path, 8)).pipe(
        Effect.provide(workspacesLayer(NodePath.join(root, "state"), recordingGit(commands)))
      )
      assert.strictEqual(fetched.commit, remote.main)
      assert.deepStrictEqual(commands, ["clone", "fetch", "rev-parse"])
    })
  )

  it.effect("a head that is no commit (a tag of a tree) is an error, never an id", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const work = NodePath.join(root, "remote-work")
      gitSync(work, "tag", "--annotate", "--message=tree", "t1", `${remote.pr1}^{tree}`)
      gitSync(work, "push", "--quiet", remote.path, "refs/tags/t1:refs/pull/7/head")
      const error = yield* fetchPullRequest(refOf(remote.path, 7)).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "MirrorCorrupt")
    })
  )

  it.effect("a FETCH_HEAD naming more than one object is MirrorCorrupt", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      // After each fetch, a second line as if another ref had been fetched too.
      const twoLines = testGit((run) => (args, options) => {
        const gitDir = args.find((arg) => arg.startsWith("--git-dir="))?.slice("--git-dir=".length)
        return run(args, options).pipe(
          Effect.tap(() =>
            Effect.sync(() => {
              if (gitDir === undefined || !args.includes("fetch")) return
              const file = NodePath.join(gitDir, "FETCH_HEAD")
              writeFileSync(file, `${readFileSync(file, "utf8")}${remote.pr2}\t\t'refs/pull/2/head' of x\n`)
            })
          )
        )
      })
      const error = yield* fetchPullRequest(refOf(remote.path, 1)).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state"), twoLines))
      )
      assert.strictEqual(error._tag, "MirrorCorrupt")
      assert.strictEqual(error._tag === "MirrorCorrupt" && error.operation, "read FETCH_HEAD")
    })
  )
})

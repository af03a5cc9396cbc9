import { chmodSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Result } from "effect"
import { type ParseOptions, type PullRequestRef, parsePullRequestRef, Workspaces } from "../src/index.ts"
import { fetchPullRequest, gitSync, makeRemote, refsOf, tempDir, testGit, workspacesLayer } from "./helpers.ts"

const refOf = (input: string, options: ParseOptions): PullRequestRef =>
  Result.getOrThrow(parsePullRequestRef(input, options))

const collect = () => {
  const lines: Array<string> = []
  return { lines, onProgress: (line: string) => Effect.sync(() => void lines.push(line)) }
}

/** What a new mirror holds besides pull requests: the remote's default branch, `main`. */
const baseRefs = (main: string): Array<string> => [`refs/prbox/base/HEAD ${main}`, `refs/prbox/base/main ${main}`]

describe("Workspaces.fetchPullRequest", () => {
  it.effect("fetches only the pull request's head into a new bare mirror", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const stateDir = NodePath.join(root, "state")
      const progress = collect()
      const fetched = yield* fetchPullRequest(refOf(remote.path, { pr: 1 }), progress.onProgress).pipe(
        Effect.provide(workspacesLayer(stateDir))
      )

      assert.strictEqual(fetched.commit, remote.pr1)
      assert.isTrue(fetched.mirrorCreated)
      assert.deepStrictEqual(fetched.fetchedRefs, ["refs/pull/1/head"])
      assert.isTrue(fetched.mirrorPath.startsWith(`${NodePath.join(stateDir, "mirrors", "local")}${NodePath.sep}`))
      assert.match(fetched.mirrorPath, /remote\.git-[0-9a-f]{12}\.git$/)
      assert.strictEqual(gitSync(fetched.mirrorPath, "rev-parse", "--is-bare-repository"), "true")
      // No branches, no tags, no other pull request: the default branch as a base, and the one ref.
      assert.deepStrictEqual(refsOf(fetched.mirrorPath), [...baseRefs(remote.main), `refs/prbox/pr/1 ${remote.pr1}`])
      assert.include(progress.lines, `fetching refs/pull/1/head from ${remote.path}`)
      assert.isFalse(progress.lines.some((line) => line.includes("\r")))
    })
  )

  it.effect("reuses the mirror for a second pull request and asks the server for its ref alone", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const trace = { file: "" }
      // GIT_TRACE_PACKET records what the client asks upload-pack for.
      const git = testGit(
        (run) => (args, options) =>
          run(
            args,
            args.includes("fetch") ? { ...options, env: { ...options.env, GIT_TRACE_PACKET: trace.file } } : options
          )
      )
      const fetchTraced = (pr: number) =>
        Effect.suspend(() => {
          trace.file = NodePath.join(root, `trace-${pr}`)
          return fetchPullRequest(refOf(remote.path, { pr }))
        })
      const { first, inodeBefore, second } = yield* Effect.gen(function* () {
        const first = yield* fetchTraced(1)
        const inodeBefore = statSync(NodePath.join(first.mirrorPath, "objects")).ino
        const second = yield* fetchTraced(2)
        return { first, inodeBefore, second }
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"), git)))

      assert.strictEqual(second.mirrorPath, first.mirrorPath)
      assert.isFalse(second.mirrorCreated)
      assert.strictEqual(statSync(NodePath.join(second.mirrorPath, "objects")).ino, inodeBefore)
      assert.strictEqual(second.commit, remote.pr2)
      assert.deepStrictEqual(second.fetchedRefs, ["refs/pull/2/head"])
      assert.deepStrictEqual(refsOf(second.mirrorPath), [
        ...baseRefs(remote.main),
        `refs/prbox/pr/1 ${remote.pr1}`,
        `refs/prbox/pr/2 ${remote.pr2}`
      ])

      const sent = readFileSync(NodePath.join(root, "trace-2"), "utf8")
        .split("\n")
        .filter((line) => line.includes("fetch> "))
      const prefixes = sent.filter((line) => line.includes("ref-prefix "))
      assert.isAbove(prefixes.length, 0)
      assert.isTrue(
        prefixes.every((line) => line.includes("refs/pull/2/head")),
        prefixes.join("\n")
      )
      const wants = sent.flatMap((line) => /want ([0-9a-f]{40})/.exec(line)?.[1] ?? [])
      assert.deepStrictEqual(wants, [remote.pr2])
      // The mirror offered what it already had from the first pull request.
      assert.isTrue(sent.some((line) => line.includes(`have ${remote.pr1}`)))
    })
  )

  it.effect("fetches GitLab-style merge request refs through the configured pattern", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const ref = refOf(`file://${remote.path}`, { pr: 3, refPattern: "refs/merge-requests/{n}/head" })
      const fetched = yield* fetchPullRequest(ref).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      assert.strictEqual(fetched.commit, remote.mr3)
      assert.deepStrictEqual(fetched.fetchedRefs, ["refs/merge-requests/3/head"])
    })
  )

  it.effect("serialises fetches of one repository and leaves a consistent mirror", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const mirrorCommands = { now: 0, max: 0 }
      // Every git command on the mirror (clone, fetch) counts.
      const git = testGit(
        (run) => (args, options) =>
          Effect.suspend(() => {
            mirrorCommands.now++
            mirrorCommands.max = Math.max(mirrorCommands.max, mirrorCommands.now)
            return run(args, options)
          }).pipe(Effect.ensuring(Effect.sync(() => mirrorCommands.now--)))
      )
      const results = yield* Effect.all(
        [1, 2, 1, 2].map((pr) => fetchPullRequest(refOf(remote.path, { pr }))),
        { concurrency: "unbounded" }
      ).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"), git)))

      assert.strictEqual(mirrorCommands.max, 1)
      assert.deepStrictEqual(
        results.map((result) => result.commit),
        [remote.pr1, remote.pr2, remote.pr1, remote.pr2]
      )
      assert.strictEqual(results.filter((result) => result.mirrorCreated).length, 1)
      const mirror = results[0]?.mirrorPath ?? ""
      gitSync(mirror, `--git-dir=${mirror}`, "fsck", "--strict", "--no-dangling")
      assert.deepStrictEqual(refsOf(mirror), [
        ...baseRefs(remote.main),
        `refs/prbox/pr/1 ${remote.pr1}`,
        `refs/prbox/pr/2 ${remote.pr2}`
      ])
      // Nothing left over from building the mirror aside.
      assert.deepStrictEqual(readdirSync(NodePath.dirname(mirror)), [NodePath.basename(mirror)])
    })
  )

  it.live("fetches different repositories in parallel", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remoteA = makeRemote(root, "a")
      const remoteB = makeRemote(root, "b")
      const aHolds = yield* Deferred.make<void>()
      const bDone = yield* Deferred.make<void>()
      const { a, b } = yield* Effect.gen(function* () {
        // A holds its mirror until B has finished: one lock for all would deadlock.
        const a = yield* fetchPullRequest(refOf(remoteA.path, { pr: 1 }), (line) =>
          line.startsWith("fetching ")
            ? Deferred.succeed(aHolds, undefined).pipe(Effect.andThen(Deferred.await(bDone)))
            : Effect.void
        ).pipe(Effect.forkChild)
        yield* Deferred.await(aHolds)
        const b = yield* fetchPullRequest(refOf(remoteB.path, { pr: 2 }))
        yield* Deferred.succeed(bDone, undefined)
        return { a: yield* Fiber.join(a), b }
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))), Effect.timeout("20 seconds"))
      assert.strictEqual(a.commit, remoteA.pr1)
      assert.strictEqual(b.commit, remoteB.pr2)
      assert.notStrictEqual(a.mirrorPath, b.mirrorPath)
    })
  )
})

describe("fetch failures are classified", () => {
  it.effect("a missing pull request ref is PullRequestNotFound", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const error = yield* fetchPullRequest(refOf(remote.path, { pr: 9 })).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "PullRequestNotFound")
      assert.include(error.message, "pull request #9 was not found")
      assert.include(error.message, "refs/pull/9/head")
    })
  )

  it.effect("a missing repository is RepositoryNotFound", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const error = yield* fetchPullRequest(refOf(NodePath.join(root, "nowhere.git"), { pr: 1 })).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "RepositoryNotFound")
      assert.include(error.message, "not found or access was denied")
    })
  )

  it.effect("an unreachable server is NetworkUnreachable", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const error = yield* fetchPullRequest(refOf("http://127.0.0.1:9/x.git", { pr: 1 })).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "NetworkUnreachable")
      assert.include(error.message, "check your network")
    })
  )

  it.effect("a remote URL with credentials is refused before git runs", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const ref: PullRequestRef = {
        ...refOf("https://example.com/r.git", { pr: 1 }),
        remoteUrl: "https://u:s3cret@example.com/r.git"
      }
      const error = yield* fetchPullRequest(ref).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "UnsafeArgument")
      assert.notInclude(error.message, "s3cret")
    })
  )
})

describe("a corrupt mirror", () => {
  it.effect("that git no longer recognises is re-created", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const progress = collect()
      const again = yield* Effect.gen(function* () {
        const first = yield* fetchPullRequest(refOf(remote.path, { pr: 1 }))
        rmSync(NodePath.join(first.mirrorPath, "HEAD"))
        return yield* fetchPullRequest(refOf(remote.path, { pr: 2 }), progress.onProgress)
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      assert.isTrue(again.mirrorCreated)
      assert.strictEqual(again.commit, remote.pr2)
      assert.isTrue(progress.lines.some((line) => line.includes("is corrupt") && line.includes("re-creating it")))
      // A fresh mirror: the first pull request's ref went with the old one.
      assert.deepStrictEqual(refsOf(again.mirrorPath), [...baseRefs(remote.main), `refs/prbox/pr/2 ${remote.pr2}`])
    })
  )

  it.effect("whose objects fail to read during a fetch is re-created", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const progress = collect()
      const again = yield* Effect.gen(function* () {
        const first = yield* fetchPullRequest(refOf(remote.path, { pr: 1 }))
        const loose = NodePath.join(first.mirrorPath, "objects", remote.pr1.slice(0, 2), remote.pr1.slice(2))
        chmodSync(loose, 0o644)
        writeFileSync(loose, "garbage")
        return yield* fetchPullRequest(refOf(remote.path, { pr: 2 }), progress.onProgress)
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      assert.isTrue(again.mirrorCreated)
      assert.strictEqual(again.commit, remote.pr2)
      assert.isTrue(progress.lines.some((line) => line.includes("is corrupt")))
      gitSync(again.mirrorPath, `--git-dir=${again.mirrorPath}`, "fsck", "--strict")
    })
  )
})

describe("Workspaces.createWorkspace", () => {
  it.effect("clones the mirror into a self-contained workspace at the pull request head", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const destination = NodePath.join(root, "workspaces", "sandbox-1")
      const originUrl = "https://github.com/o/r.git"
      const { created, fetched } = yield* Effect.gen(function* () {
        const fetched = yield* fetchPullRequest(refOf(remote.path, { pr: 2 }))
        const created = yield* Workspaces.use((w) =>
          w.createWorkspace({
            mirrorPath: fetched.mirrorPath,
            commit: fetched.commit,
            destination,
            originUrl,
            branchName: "pr-2"
          })
        )
        return { created, fetched }
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))

      assert.deepStrictEqual(created, { path: destination, branch: "pr-2", commit: remote.pr2 })
      assert.isTrue(statSync(NodePath.join(destination, ".git")).isDirectory(), "not a worktree")
      assert.strictEqual(gitSync(destination, "rev-parse", "HEAD"), remote.pr2)
      assert.strictEqual(gitSync(destination, "symbolic-ref", "--short", "HEAD"), "pr-2")
      assert.strictEqual(gitSync(destination, "status", "--porcelain"), "")
      assert.strictEqual(readFileSync(NodePath.join(destination, "pr2.txt"), "utf8"), "pr2.txt\n")
      assert.strictEqual(gitSync(destination, "remote", "get-url", "origin"), originUrl)
      // Copied, neither borrowed nor hardlinked: no alternates pointing outside the workspace, no inode shared with the mirror.
      assert.throws(() => statSync(NodePath.join(destination, ".git", "objects", "info", "alternates")))
      const object = NodePath.join("objects", remote.pr2.slice(0, 2), remote.pr2.slice(2))
      assert.notStrictEqual(
        statSync(NodePath.join(destination, ".git", object)).ino,
        statSync(NodePath.join(fetched.mirrorPath, object)).ino
      )
      assert.strictEqual(statSync(NodePath.join(destination, ".git", object)).nlink, 1)
      // Self-contained: it survives the mirror.
      rmSync(fetched.mirrorPath, { recursive: true })
      gitSync(destination, "fsck", "--strict")
    })
  )

  it.effect("refuses credentials in the origin URL, unsafe branch names and partial commits", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const base = {
        mirrorPath: NodePath.join(root, "mirror.git"),
        commit: "a".repeat(40),
        destination: NodePath.join(root, "ws"),
        originUrl: "https://github.com/o/r.git",
        branchName: "pr-1"
      }
      const attempts = [
        { ...base, originUrl: "https://x-access-token:ghp_s3cret@github.com/o/r.git" },
        { ...base, originUrl: "https://ghp_s3cret@github.com/o/r.git" },
        { ...base, branchName: "--orphan" },
        { ...base, branchName: "a..b" },
        { ...base, commit: "HEAD~1" },
        { ...base, destination: "relative/ws" }
      ]
      const errors = yield* Effect.forEach(attempts, (options) =>
        Workspaces.use((w) => w.createWorkspace(options)).pipe(Effect.flip)
      ).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      for (const error of errors) {
        assert.strictEqual(error._tag, "UnsafeArgument")
        assert.notInclude(error.message, "s3cret")
      }
    })
  )

  it.effect("leaves no destination behind when the checkout fails", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const destination = NodePath.join(root, "ws")
      const error = yield* Effect.gen(function* () {
        const fetched = yield* fetchPullRequest(refOf(remote.path, { pr: 1 }))
        return yield* Workspaces.use((w) =>
          w.createWorkspace({
            mirrorPath: fetched.mirrorPath,
            commit: "0".repeat(40),
            destination,
            originUrl: "https://github.com/o/r.git",
            branchName: "pr-1"
          })
        ).pipe(Effect.flip)
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))
      assert.strictEqual(error._tag, "GitCommandFailed")
      assert.include(error.message, "git checkout")
      assert.throws(() => statSync(destination))
    })
  )
})

describe("the git processes of an open", () => {
  it.effect(
    "a first and a second pull request: (a clone of the remote,) fetch, one listing (the root and .devcontainer together), clone, checkout; nothing else",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir
        const remote = makeRemote(root)
        const commands: Array<string> = []
        const git = testGit((run) => (args, options) => {
          commands.push(args.find((arg) => !arg.startsWith("-")) ?? "")
          return run(args, options)
        })
        const open = (pr: number) =>
          Effect.gen(function* () {
            commands.length = 0
            const workspaces = yield* Workspaces
            const fetched = yield* workspaces.fetchPullRequest(refOf(remote.path, { pr }))
            // What admission reads to find a devcontainer.json (the repository has none).
            const files = workspaces.commitFiles(fetched.mirrorPath, fetched.commit)
            assert.isUndefined(yield* files.read(".devcontainer/devcontainer.json"))
            assert.isUndefined(yield* files.read(".devcontainer.json"))
            assert.isUndefined(yield* files.list(".devcontainer"))
            const destination = NodePath.join(root, "workspaces", `sandbox-${pr}`)
            yield* workspaces.createWorkspace({
              mirrorPath: fetched.mirrorPath,
              commit: fetched.commit,
              destination,
              originUrl: "https://github.com/o/r.git",
              branchName: `pr-${pr}`
            })
            assert.strictEqual(gitSync(destination, "remote", "get-url", "origin"), "https://github.com/o/r.git")
            return [...commands]
          })
        const [first, second] = yield* Effect.all([open(1), open(2)]).pipe(
          Effect.provide(workspacesLayer(NodePath.join(root, "state"), git))
        )
        // The commit fetched is read from FETCH_HEAD, not asked of git.
        assert.deepStrictEqual(first, ["clone", "fetch", "ls-tree", "clone", "checkout"])
        assert.deepStrictEqual(second, ["fetch", "ls-tree", "clone", "checkout"])
      })
  )
})

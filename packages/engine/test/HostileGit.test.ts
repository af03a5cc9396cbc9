import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Git } from "@prbox/git"
import { Effect, Ref } from "effect"
import { folderSnapshot } from "../../../scripts/testing/snapshot.ts"
import { gitSync, movePullRequest } from "../../git/test/helpers.ts"
import { Gc, Reconciler, SandboxFiles, SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { type EngineFixture, type EngineOptions, openRunning, openSettled, rowOf, withEngine } from "./harness.ts"

/**
 * A sandbox that attacks through git: its setup (as a PR's postCreateCommand
 * would) plants a git config knob, hook or link in its workspace, each
 * meant to run a command on the host, which would leave a marker file in
 * the test's home (a path the container cannot reach). Then prbox does what
 * a user does next; the host shows nothing happened: no marker, and no host
 * git command ran in the workspace once the container had started.
 */

/** The host git commands run, with their working folder, in order. */
type HostGitCall = { readonly args: ReadonlyArray<string>; readonly cwd: string }

const recordingGit = (calls: Ref.Ref<ReadonlyArray<HostGitCall>>): Pick<EngineOptions, "git"> => ({
  git: (real) =>
    Git.of({
      run: (args, options) =>
        Effect.andThen(
          Ref.update(calls, (done) => [...done, { args, cwd: options.cwd }]),
          real.run(args, options)
        )
    })
})

/**
 * A host folder for the markers, made before the engine (the setup is
 * configured before its home exists); the container has no view of it.
 */
const markerFolder = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-markers-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const markerOf = (dir: string, attack: string) => join(dir, `pwned-${attack}`)

/** A hook script that leaves the marker. */
const hook = (marker: string) => `printf '#!/bin/sh\\ntouch ${marker}\\n'`

/** Each attack: what the setup runs in the workspace (as the sandbox user) to plant it. */
const attacks: ReadonlyArray<{ readonly name: string; readonly plant: (marker: string) => string }> = [
  { name: "fsmonitor", plant: (m) => `git config core.fsmonitor "touch ${m}; false"` },
  {
    name: "hooksPath",
    plant: (m) =>
      `mkdir -p .githooks && for h in post-merge post-checkout reference-transaction post-rewrite pre-auto-gc post-index-change; do ${hook(m)} > .githooks/$h; chmod +x .githooks/$h; done && git config core.hooksPath .githooks`
  },
  ...["post-merge", "post-checkout", "reference-transaction", "post-rewrite", "post-index-change"].map((name) => ({
    name: `hook-${name}`,
    plant: (m: string) => `${hook(m)} > .git/hooks/${name} && chmod +x .git/hooks/${name}`
  })),
  {
    name: "filter",
    plant: (m) =>
      `mkdir -p .git/info && echo '* filter=pwn' > .git/info/attributes && git config filter.pwn.smudge "sh -c 'touch ${m}; cat'" && git config filter.pwn.clean "sh -c 'touch ${m}; cat'"`
  },
  {
    name: "insteadOf-ext",
    plant: (m) =>
      `git config protocol.ext.allow always && git config url."ext::sh -c touch% ${m}% >&2".insteadOf "$(git remote get-url origin)"`
  },
  {
    name: "include",
    plant: (m) =>
      `printf '[core]\\n\\tfsmonitor = "touch ${m}; false"\\n' > .git/extra && git config include.path extra`
  },
  { name: "sshCommand", plant: (m) => `git config core.sshCommand "touch ${m}; ssh"` },
  { name: "diff-external", plant: (m) => `git config diff.external "sh -c 'touch ${m}'"` },
  {
    name: "git-dir-link",
    plant: (m) =>
      `mkdir -p /tmp/other && cp -a .git /tmp/other/.git && git --git-dir=/tmp/other/.git config core.fsmonitor "touch ${m}; false" && rm -rf .git && ln -s /tmp/other/.git .git`
  },
  {
    name: "git-file",
    plant: (m) =>
      `mv .git /tmp/real.git && git --git-dir=/tmp/real.git config core.fsmonitor "touch ${m}; false" && echo 'gitdir: /tmp/real.git' > .git`
  }
]

/** A sandbox of an image with git (its update runs it there) whose setup runs `setup`, with host git recorded. */
const withHostileSetup = <A, E>(
  setup: ReadonlyArray<string>,
  calls: Ref.Ref<ReadonlyArray<HostGitCall>>,
  body: Parameters<typeof withEngine<A, E>>[1]
) => withEngine({ config: { image: healthzGitImage(), setupCommands: setup }, ...recordingGit(calls) }, body)

/** Host git commands that named the sandbox's workspace (as their folder or in an argument) after its container started. */
const inWorkspace = (calls: ReadonlyArray<HostGitCall>, row: Sandbox) => {
  const workspace = row.workspacePath ?? "/nonexistent"
  // The open's clone (the `.git` the container's git checks out from) is the last the host makes there.
  const clone = calls.findIndex((call) => call.args.includes("--no-checkout"))
  return calls
    .slice(clone + 1)
    .filter((call) => call.cwd.startsWith(workspace) || call.args.some((arg) => arg.includes(workspace)))
}

const noMarkers = (dir: string) => {
  const found = readdirSync(dir).filter((name) => name.startsWith("pwned-"))
  assert.deepStrictEqual(found, [], "a command the sandbox planted ran on the host")
}

/** Moves PR 1 one commit on, then updates the sandbox to it (fast-forward: merge, hooks, status). */
const moveAndUpdate = ({ home, remote }: EngineFixture, row: Sandbox) =>
  Effect.gen(function* () {
    const next = movePullRequest(home, remote.pr1, `next-${Date.now()}.txt`)
    const report = yield* Effect.flatMap(SandboxService, (sandboxes) => sandboxes.update(row.id, { force: true }))
    return { next, report }
  })

describe("a sandbox whose setup plants git config, hooks and links in its workspace", () => {
  for (const attack of attacks) {
    it.live(`${attack.name}: an update runs none of it on the host`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const markers = yield* markerFolder
          const calls = yield* Ref.make<ReadonlyArray<HostGitCall>>([])
          // The plant is the setup's (as a PR's postCreateCommand): a command in the sandbox, as its user.
          return yield* withHostileSetup([attack.plant(markerOf(markers, attack.name))], calls, (fixture) =>
            Effect.gen(function* () {
              const row = yield* openRunning(fixture.remote.path, 1)
              assert.isNull(row.setupError, "the plant failed")
              yield* Effect.result(moveAndUpdate(fixture, row))
              noMarkers(markers)
              assert.deepStrictEqual(inWorkspace(yield* Ref.get(calls), row), [])
            })
          )
        })
      )
    )
  }

  it.live(
    "every knob at once: update, diff --base, restart, rebuild, stop, reconcile, gc, rm and prune run none of it",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const markers = yield* markerFolder
          const calls = yield* Ref.make<ReadonlyArray<HostGitCall>>([])
          // Each plant on its own, so one that moves .git away does not stop the others.
          const setup = attacks.map((attack) => `( ${attack.plant(markerOf(markers, attack.name))} ) || true`)
          return yield* withHostileSetup(setup, calls, (fixture) =>
            Effect.gen(function* () {
              const sandboxes = yield* SandboxService
              const gc = yield* Gc
              const row = yield* openRunning(fixture.remote.path, 1)
              yield* Effect.result(moveAndUpdate(fixture, row))
              yield* Effect.result(
                Effect.flatMap(SandboxFiles, (files) =>
                  files.diff(row.id, { against: "base", paths: [], stat: false, maxBytes: 1 << 20 })
                )
              )
              yield* sandboxes.stop(row.id)
              yield* sandboxes.restart(row.id)
              yield* sandboxes.awaitIdle(row.id)
              yield* Effect.result(sandboxes.rebuild(row.id))
              yield* sandboxes.awaitIdle(row.id)
              yield* Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
              yield* sandboxes.stop(row.id)
              yield* Effect.result(gc.run())
              yield* sandboxes.delete(row.id)
              yield* Effect.result(Effect.flatMap(gc.planPrune, gc.prune))
              noMarkers(markers)
              assert.deepStrictEqual(inWorkspace(yield* Ref.get(calls), row), [])
            })
          )
        })
      )
  )
})

describe("an image whose own processes plant hooks while the open writes its files", () => {
  it.live(
    "the checkout runs in the container: hooks and config planted before it (held by a latch) run nothing on the host",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const markers = yield* markerFolder
          const calls = yield* Ref.make<ReadonlyArray<HostGitCall>>([])
          const plants = attacks.filter((attack) => attack.name.startsWith("hook-") || attack.name === "fsmonitor")
          const planted = yield* Ref.make(false)
          return yield* withEngine(
            {
              config: { image: healthzGitImage() },
              ...recordingGit(calls),
              // The latch: the open's checkout waits until a process of the container (as an image's
              // entrypoint would) has planted every hook and the fsmonitor in the clone's .git.
              runtime: (real) => ({
                ...real,
                exec: (containerId, command, options) =>
                  command.includes("checkout")
                    ? Effect.gen(function* () {
                        const plant = plants.map((attack) => `( ${attack.plant(markerOf(markers, attack.name))} )`)
                        const done = yield* real.exec(containerId, ["sh", "-c", plant.join(" && ")], options)
                        yield* Ref.set(planted, done.exitCode === 0)
                        return yield* real.exec(containerId, command, options)
                      })
                    : real.exec(containerId, command, options)
              })
            },
            (fixture) =>
              Effect.gen(function* () {
                // The planted fsmonitor breaks the sandbox's own checkout: that is the sandbox's to lose.
                const row = yield* openSettled(fixture.remote.path, 1)
                assert.isTrue(yield* Ref.get(planted), "the hooks were not planted before the checkout")
                if (row.status === "running") yield* Effect.result(moveAndUpdate(fixture, row))
                noMarkers(markers)
                assert.deepStrictEqual(inWorkspace(yield* Ref.get(calls), row), [])
              })
          )
        })
      )
  )
})

describe("a sandbox that points origin at another repository the user can read", () => {
  it.live(
    "update fetches from the remote recorded at open: the other repository's commits reach neither the mirror nor the sandbox",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          // A "private" repository on this machine, with a commit nobody gave the sandbox.
          const outside = yield* markerFolder
          const secretWork = join(outside, "secret-work")
          const secret = join(outside, "secret.git")
          gitSync(outside, "init", "--quiet", "--initial-branch=main", secretWork)
          execFileSync(
            "sh",
            ["-c", "echo secret > secret.txt && git add . && git -c user.name=t -c user.email=t@t commit -qm secret"],
            {
              cwd: secretWork
            }
          )
          const secretCommit = gitSync(secretWork, "rev-parse", "HEAD")
          gitSync(outside, "clone", "--quiet", "--bare", secretWork, secret)
          gitSync(secret, "update-ref", "refs/pull/1/head", secretCommit)
          const calls = yield* Ref.make<ReadonlyArray<HostGitCall>>([])
          return yield* withHostileSetup([`git remote set-url origin ${secret}`], calls, (fixture) =>
            Effect.gen(function* () {
              const row = yield* openRunning(fixture.remote.path, 1)
              assert.isNull(row.setupError)
              const { next, report } = yield* moveAndUpdate(fixture, row)
              assert.strictEqual(report.to, next)
              const hostCalls = yield* Ref.get(calls)
              for (const call of hostCalls) assert.notInclude(call.args.join(" "), secret)
              const mirror = hostCalls.find((call) => call.args.includes("--no-checkout"))?.args.at(-2) ?? ""
              assert.isTrue(existsSync(mirror))
              assert.throws(() => gitSync(mirror, `--git-dir=${mirror}`, "cat-file", "-e", secretCommit))
              assert.strictEqual((yield* rowOf(row.id)).sourceCommit, next)
            })
          )
        })
      )
  )
})

describe("a sandbox that rewrites its workspace's object files", () => {
  it.live(
    "shares no inode with the mirror: root in the container rewriting every object file leaves the mirror as it was",
    () =>
      Effect.gen(function* () {
        const calls = yield* Ref.make<ReadonlyArray<HostGitCall>>([])
        return yield* withHostileSetup([], calls, ({ remote }) =>
          Effect.gen(function* () {
            const row = yield* openRunning(remote.path, 1)
            const mirror =
              (yield* Ref.get(calls)).find((call) => call.args.includes("--no-checkout"))?.args.at(-2) ?? ""
            const before = folderSnapshot(mirror)
            const objects = join(row.workspacePath ?? "", ".git", "objects")
            const shared = readdirSync(objects, { recursive: true, withFileTypes: true })
              .filter((entry) => entry.isFile())
              .filter((entry) => statSync(join(entry.parentPath, entry.name)).nlink > 1)
            assert.deepStrictEqual(shared, [], "an object file has another link (the mirror's)")
            // Root in the container (an image's sudo) can write any file the workspace holds.
            execFileSync("docker", [
              "exec",
              "-u",
              "0",
              row.containerId ?? "",
              "sh",
              "-c",
              `cd ${row.environmentPlan?.workspaceFolder ?? "/workspace"}/.git/objects && find . -type f -exec sh -c 'chmod u+w "$1"; printf X >> "$1"' _ {} \\;`
            ])
            assert.deepStrictEqual(folderSnapshot(mirror), before)
            gitSync(mirror, `--git-dir=${mirror}`, "fsck", "--strict", "--no-progress")
          })
        )
      })
  )
})

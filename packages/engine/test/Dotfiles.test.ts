import { existsSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { type PrboxConfig, SandboxService } from "../src/index.ts"
import { type DotfilesLayout, dotfilesRepository } from "./dotfiles-fixtures.ts"
import {
  bounded,
  type EngineFixture,
  healthzTag,
  logLines,
  openRunning,
  openSettled,
  rowOf,
  withEngine
} from "./harness.ts"
import { shIn } from "./identity-fixtures.ts"

/** Stops and restarts the sandbox, waiting for its worker: the row as it then stands. */
const stopAndRestart = (row: Sandbox) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    yield* sandboxes.stop(row.id)
    yield* sandboxes.restart(row.id)
    yield* sandboxes.awaitIdle(row.id).pipe(bounded("the restart did not finish"))
    return yield* rowOf(row.id)
  })

/** An install script that records each run and its folder in the sandbox's home. */
const RECORDING = '#!/bin/sh\necho "ran $0 in $(pwd)" >> "$HOME/dotfiles-runs"\necho "installed ok"\n'
const FAILING = "#!/bin/sh\nexit 9\n"

type Body<A, E> = Parameters<typeof withEngine<A, E>>[1]

/** An engine whose config.json names a dotfiles repository made from `layout` (`setting` the rest of it). */
const withDotfiles = <A, E>(
  layout: DotfilesLayout,
  setting: (repository: string) => NonNullable<PrboxConfig["dotfiles"]>,
  body: (fixture: EngineFixture, repository: string) => ReturnType<Body<A, E>>
) =>
  Effect.scoped(
    Effect.flatMap(dotfilesRepository(layout), (repository) =>
      withEngine({ config: { dotfiles: setting(repository) } }, (fixture) => body(fixture, repository))
    )
  )

describe("dotfiles", () => {
  it.live("installCommand runs once per container as the sandbox user, in ~/dotfiles; a restart does not run it", () =>
    withDotfiles(
      { files: { "install.sh": RECORDING, "setup.sh": FAILING } },
      (repository) => ({ repository, installCommand: "install.sh", targetPath: "~/dotfiles" }),
      ({ remote }, repository) =>
        Effect.gen(function* () {
          const row = yield* openRunning(remote.path, 1)
          assert.isNull(row.setupError)
          assert.strictEqual(
            yield* shIn(row.id, 'cat "$HOME/dotfiles-runs"'),
            "ran ./install.sh in /home/prbox/dotfiles"
          )
          // The files are data: the default branch's tree, no .git.
          assert.strictEqual(yield* shIn(row.id, "ls -A ~/dotfiles | sort | tr '\\n' ' '"), "install.sh setup.sh")
          const lines = yield* logLines(row.id)
          assert.include(lines, `dotfiles: fetching ${repository}`)
          assert.include(lines, "[dotfiles] running ./install.sh")
          assert.include(lines, "[dotfiles] installed ok")

          const restarted = yield* stopAndRestart(row)
          assert.strictEqual(restarted.status, "running", restarted.error ?? "")
          assert.strictEqual(yield* shIn(row.id, 'wc -l < "$HOME/dotfiles-runs"'), "1")
        })
    )
  )

  it.live("without installCommand the first of the CLI's names runs (bootstrap before setup.sh), to a targetPath", () =>
    withDotfiles(
      { files: { bootstrap: RECORDING, "setup.sh": FAILING, "script/setup": FAILING, ".bashrc": "# mine\n" } },
      (repository) => ({ repository, targetPath: "~/.local/dots" }),
      ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openRunning(remote.path, 1)
          assert.isNull(row.setupError)
          assert.strictEqual(
            yield* shIn(row.id, 'cat "$HOME/dotfiles-runs"'),
            "ran ./bootstrap in /home/prbox/.local/dots"
          )
          // An install script ran: nothing was linked.
          assert.strictEqual(yield* shIn(row.id, "test -e ~/.bashrc || echo absent"), "absent")
        })
    )
  )

  it.live("after postCreateCommand (past waitFor, in the background) and before postStartCommand, as the CLI", () =>
    withDotfiles(
      { files: { "install.sh": '#!/bin/sh\necho "post:$(cat ~/post 2>/dev/null)" > ~/dotfiles-runs\n' } },
      (repository) => ({ repository, installCommand: "install.sh", targetPath: "~/dotfiles" }),
      ({ remote }) =>
        Effect.gen(function* () {
          const devcontainer = {
            image: healthzTag,
            postCreateCommand: "echo created > ~/post",
            postStartCommand: "cp ~/dotfiles-runs ~/start"
          }
          pushPullRequest(remote.path, 1, { ".devcontainer/devcontainer.json": JSON.stringify(devcontainer) })
          const row = yield* openRunning(remote.path, 1)
          assert.isNull(row.setupError)
          assert.strictEqual(yield* shIn(row.id, "cat ~/start"), "post:created")
        })
    )
  )

  it.live(
    "with no install script, the top-level dotfiles (not .git) are linked into the home; a plain string is the repository",
    () =>
      withDotfiles(
        { files: { ".bashrc": "alias ll='ls -l'\n", ".vimrc": "set nu\n", "README.md": "mine\n" } },
        (repository) => repository,
        ({ remote }) =>
          Effect.gen(function* () {
            const row = yield* openRunning(remote.path, 1)
            assert.isNull(row.setupError)
            assert.strictEqual(yield* shIn(row.id, "readlink ~/.bashrc"), "/home/prbox/dotfiles/.bashrc")
            assert.strictEqual(yield* shIn(row.id, "cat ~/.vimrc"), "set nu")
            assert.strictEqual(yield* shIn(row.id, "test -e ~/README.md || test -e ~/.git || echo neither"), "neither")
            assert.include(yield* logLines(row.id), "[dotfiles] linked into the home: .bashrc .vimrc")
          })
      )
  )

  it.live("a failing install is the setup's error, named with its exit code, never its output; the sandbox runs", () =>
    withDotfiles(
      { files: { "install.sh": '#!/bin/sh\necho "token ghp_dotfilesOutput0123"\nexit 7\n' } },
      (repository) => ({ repository, installCommand: "install.sh", targetPath: "~/dotfiles" }),
      ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openRunning(remote.path, 1)
          assert.strictEqual(row.setupError, "dotfiles: install.sh failed with exit code 7")
          const lines = yield* logLines(row.id)
          assert.include(lines, "dotfiles: install.sh failed with exit code 7; setup ended there")
          assert.strictEqual(lines.at(-1), "status: running")
        })
    )
  )

  it.live("a repository that cannot be fetched is the setup's error, not a failed open", () =>
    Effect.scoped(
      withEngine({ config: { dotfiles: "/nonexistent/prbox-dotfiles" } }, ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openRunning(remote.path, 1)
          assert.match(row.setupError ?? "", /^dotfiles from \/nonexistent\/prbox-dotfiles: /)
        })
      )
    )
  )

  it.live("hostile dotfiles: links, hooks and untracked files never make the host act or reach the sandbox", () => {
    const secret = "prbox-host-secret-7c1e"
    return withDotfiles(
      {
        files: { ".bashrc": "# mine\n" },
        links: { ".profile": "/etc/passwd", ".ssh": "/root/.ssh" },
        untracked: { ".netrc": `machine x password ${secret}\n` }
      },
      (repository) => repository,
      ({ remote }, repository) =>
        Effect.gen(function* () {
          // The repository's own hooks and config would run a host program if host git worked in it.
          const hooks = join(repository, ".git", "hooks")
          const touched = join(dirname(repository), "host-acted")
          for (const hook of ["post-checkout", "post-merge", "pre-auto-gc", "reference-transaction"]) {
            writeFileSync(join(hooks, hook), `#!/bin/sh\ntouch ${touched}\n`, { mode: 0o755 })
          }
          writeFileSync(join(dirname(repository), "beside.txt"), secret)
          const row = yield* openRunning(remote.path, 1)
          assert.isNull(row.setupError)
          assert.isFalse(existsSync(touched), "a hook of the dotfiles repository ran on the host")
          // The links are the container's own: unpacked as links, never followed on the host.
          assert.strictEqual(yield* shIn(row.id, "readlink ~/dotfiles/.profile"), "/etc/passwd")
          assert.strictEqual(yield* shIn(row.id, "readlink ~/.profile"), "/home/prbox/dotfiles/.profile")
          assert.strictEqual(yield* shIn(row.id, "readlink ~/dotfiles/.ssh"), "/root/.ssh")
          // Only committed files: nothing untracked, nothing beside the repository.
          assert.strictEqual(yield* shIn(row.id, "test -e ~/dotfiles/.netrc || echo absent"), "absent")
          assert.strictEqual(yield* shIn(row.id, `grep -rl ${secret} ~/ /workspace 2>/dev/null || true`), "")
        })
    )
  })

  it.live("dotfiles over 64 MiB are refused before anything reaches the sandbox", () =>
    withDotfiles(
      { files: { ".bashrc": "# mine\n", "big.bin": "\0".repeat(65 * 1024 * 1024) } },
      (repository) => repository,
      ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openSettled(remote.path, 1)
          assert.strictEqual(row.status, "running", row.error ?? "")
          const reason = row.setupError ?? ""
          assert.match(reason, /^dotfiles from .*: archiveCommit: its files hold 65\.0 MiB, over 64 MiB$/, reason)
          assert.strictEqual(yield* shIn(row.id, "test -e ~/dotfiles || echo absent"), "absent")
        })
    )
  )
})

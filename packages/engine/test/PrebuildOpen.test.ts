import { execFileSync } from "node:child_process"
import { existsSync, lstatSync, readFileSync, readlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { PrebuildRepo } from "@prbox/store"
import { Effect } from "effect"
import { gitSync, pushPullRequest } from "../../git/test/helpers.ts"
import { MakePrebuild } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { logLines, openRunning, openSettled, withEngine } from "./harness.ts"
import { gitIn, prebuiltBase, removePrebuildsOf, shInContainer } from "./prebuild-support.ts"

const read = (row: Sandbox, file: string) => readFileSync(join(row.workspacePath ?? "", file), "utf8")

/** The commands of the execs Docker made in a container from `since` (seconds) until now. */
const execsOf = (containerId: string, since: number): Array<string> =>
  execFileSync(
    "docker",
    ["events", "--since", String(since), "--until", String(Math.ceil(Date.now() / 1000) + 1)].concat([
      "--filter",
      `container=${containerId}`,
      "--filter",
      "event=exec_create",
      "--format",
      "{{.Action}}"
    ]),
    { encoding: "utf8" }
  )
    .split("\n")
    .filter((line) => line !== "")

/**
 * The sandbox's checkout, and its updateContentCommand after it, ran in the
 * probe's exec (prbox-probe-beside), never in one of their own (prbox-git;
 * the step's command).
 */
const checkedOutInProbeExec = (row: Sandbox, since: number) => {
  const execs = execsOf(row.containerId ?? "", since)
  assert.isTrue(
    execs.some((argv) => argv.includes("prbox-probe-beside")),
    execs.join("\n")
  )
  assert.isFalse(
    execs.some((argv) => /prbox-git\s/.test(argv) || argv.includes("echo update-")),
    execs.join("\n")
  )
}

/** What the base's profile exports: shell text that would run if a step's environment were not sent whole. */
const PROFILE_VALUE = `it's $(touch "$HOME/pwned") \`touch "$HOME/pwned"\` "q"`
const profileLine = `export PROBED_VALUE='${PROFILE_VALUE.replaceAll("'", "'\\''")}'\n`

/**
 * The base's devcontainer.json: onCreate "installs" (and plants what a
 * hostile base could: a hook, core.fsmonitor and a link, each naming a
 * host path that only the host could reach, and a login profile whose
 * variable is shell text), updateContent logs each run and what it saw.
 */
const devcontainer = (home: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    image: healthzGitImage(),
    onCreateCommand: [
      `echo ${Buffer.from(profileLine).toString("base64")} | base64 -d >> "$HOME/.profile"`,
      "mkdir -p deps && echo made-on-$(git rev-parse --short HEAD) > deps/made",
      `printf '#!/bin/sh\\ntouch ${home}/hook-ran; touch .git/hook-ran-here\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`,
      `git config core.fsmonitor 'touch ${home}/fsmonitor-ran'`,
      "git config --add remote.origin.url /elsewhere.git",
      `ln -s ${home}/secret deps/escape`
    ].join(" && "),
    updateContentCommand:
      'echo update-$(cat pr.txt 2>/dev/null || echo base) >> deps/log && echo said-$SAID && printf %s "$PROBED_VALUE" > probed.txt',
    remoteEnv: { SAID: "over" },
    postCreateCommand: "echo post > post.txt",
    ...extra
  })

describe("opening from a prebuild", () => {
  it.live(
    "an open of the base's environment makes one; the next PR starts from it with its own head and what onCreate made; a PR changing devcontainer.json takes the full path; nothing a container wrote acts on the host",
    () =>
      withEngine({ config: { prebuilds: { maxGiB: 10, keepDays: 7 } } }, ({ home, remote }) =>
        Effect.gen(function* () {
          writeFileSync(join(home, "secret"), "host secret\n")
          const { base, first } = yield* prebuiltBase(remote.path, devcontainer(home))
          assert.include(
            (yield* logLines(first.id)).join("\n"),
            "full path: no prebuild of this environment is ready yet"
          )
          const [made] = yield* (yield* PrebuildRepo).list
          assert.strictEqual(made?.state, "ready", made?.error ?? "no prebuild")
          assert.strictEqual(made?.baseCommit, base)

          const head = pushPullRequest(remote.path, 1, { "pr.txt": "one" })
          const since = Math.floor(Date.now() / 1000)
          const row = yield* openRunning(remote.path, 1)
          checkedOutInProbeExec(row, since)
          const log = (yield* logLines(row.id)).join("\n")
          assert.include(log, `from prebuild ${made?.id}`)
          assert.strictEqual(gitIn(row, "rev-parse", "HEAD"), head, "the PR's own head")
          assert.strictEqual(gitIn(row, "symbolic-ref", "--short", "HEAD"), "pr-1")
          assert.strictEqual(
            gitIn(row, "config", "--get-all", "remote.origin.url"),
            remote.path,
            "origin is the row's remote, only"
          )
          assert.strictEqual(read(row, "pr.txt"), "one")
          assert.strictEqual(
            read(row, "deps/made"),
            `made-on-${base.slice(0, 7)}\n`,
            "onCreate ran once, in the prebuild"
          )
          assert.strictEqual(read(row, "deps/log"), "update-base\nupdate-one\n", "updateContent ran again on the PR")
          assert.include(log, "said-over", "its output is in the log, and remoteEnv was its environment")
          assert.strictEqual(read(row, "probed.txt"), PROFILE_VALUE, "the probed environment, whole")
          assert.strictEqual(
            shInContainer(row, `test -e "$HOME/pwned" && echo ran || echo none`),
            "none",
            "nothing in it ran"
          )
          assert.strictEqual(read(row, "post.txt"), "post\n")
          assert.isTrue(existsSync(join(row.workspacePath ?? "", ".git/hook-ran-here")), "its hook ran, in the sandbox")
          assert.isFalse(existsSync(join(home, "hook-ran")), "no hook of the prebuild ran on the host")
          assert.isFalse(existsSync(join(home, "fsmonitor-ran")), "no git of the host read the prebuild's config")
          assert.strictEqual(readFileSync(join(home, "secret"), "utf8"), "host secret\n")
          // Copied as the link it is, never followed: here it would have brought the host's file in.
          const link = join(row.workspacePath ?? "", "deps/escape")
          assert.isTrue(lstatSync(link).isSymbolicLink(), "the prebuild's link is a link in the sandbox")
          assert.strictEqual(readlinkSync(link), join(home, "secret"))
          assert.isTrue((yield* (yield* PrebuildRepo).get(made?.id ?? ""))?.usedAt !== null)

          const changed = devcontainer(home, { containerEnv: { CHANGED: "1" } })
          pushPullRequest(remote.path, 2, { ".devcontainer/devcontainer.json": changed })
          const other = yield* openRunning(remote.path, 2)
          const otherLog = (yield* logLines(other.id)).join("\n")
          assert.include(otherLog, "full path: this PR changes its environment from its base branch's")
          assert.notInclude(otherLog, "from prebuild")
          assert.strictEqual(read(other, "deps/log"), "update-base\n", "its own create-time steps ran")
          yield* (yield* MakePrebuild).settled
          assert.lengthOf(yield* (yield* PrebuildRepo).list, 1, "nothing is made from a PR's own environment")
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    300_000
  )

  it.live(
    "a checkout that fails in the probe's exec fails the open with git's own reason, never taken for the probe's",
    () =>
      withEngine({ config: { prebuilds: { maxGiB: 10, keepDays: 7 } } }, ({ home, remote }) =>
        Effect.gen(function* () {
          // The base's onCreate drops the prebuild's objects: no PR's bundle can be brought in on top of it.
          const broken = devcontainer(home, { onCreateCommand: "mkdir -p deps && find .git/objects -type f -delete" })
          yield* prebuiltBase(remote.path, broken)
          pushPullRequest(remote.path, 4, { "four.txt": "4" })
          const since = Math.floor(Date.now() / 1000)
          const row = yield* openSettled(remote.path, 4)
          assert.strictEqual(row.status, "error")
          assert.include(row.error ?? "", "git checkout of the PR in the sandbox")
          assert.include(row.error ?? "", "lacks these prerequisite commits")
          checkedOutInProbeExec(row, since)
          const log = (yield* logLines(row.id)).join("\n")
          assert.include(log, "from prebuild")
          assert.notInclude(log, "userEnvProbe")
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    300_000
  )

  it.live(
    "prebuilds: false gives today's path: nothing looked up, nothing made",
    () =>
      withEngine({ config: { prebuilds: false } }, ({ home, remote }) =>
        Effect.gen(function* () {
          const base = pushPullRequest(remote.path, 90, { ".devcontainer/devcontainer.json": devcontainer(home) })
          gitSync(remote.path, "update-ref", "refs/heads/main", base)
          pushPullRequest(remote.path, 3, { "three.txt": "3" })
          const row = yield* openRunning(remote.path, 3)
          const log = (yield* logLines(row.id)).join("\n")
          assert.notInclude(log, "prebuild")
          assert.notInclude(log, "full path")
          yield* (yield* MakePrebuild).settled
          assert.lengthOf(yield* (yield* PrebuildRepo).list, 0)
        })
      ),
    300_000
  )
})

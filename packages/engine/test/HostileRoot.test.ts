import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { statePaths } from "@prbox/domain"
import { Effect, Ref } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { CONTAINER_HOME } from "../src/CodeServerSpec.ts"
import { SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { inspectContainer, openRunning, withEngine } from "./harness.ts"

/**
 * Root inside a sandbox (an image's passwordless sudo, a trusted
 * repository's root user; here `docker exec -u 0`) tries to leave something
 * in the folders the host keeps for it (the workspace and the home) that
 * would act on the host: a device node, a setuid copy of a shell. A root
 * daemon's state folder is its own (0700), so no other user of the host
 * reaches what is left there; the device node cannot be made at all.
 */
const asRootIn = (containerId: string, script: string) =>
  spawnSync("docker", ["exec", "-u", "0", containerId, "sh", "-c", script], { encoding: "utf8" })

/**
 * Runs `path` (a shell; `-p` keeps what its setuid bit gives) from a shell of
 * nobody (uid 65534) on the host: what any other user of the machine could do.
 */
const asNobody = (path: string) =>
  spawnSync(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", `'${path}' -p -c 'id -u'`],
    {
      encoding: "utf8"
    }
  )

describe("root in a sandbox, against the host", () => {
  it.live("cannot make a device node in the workspace or the home: its container has no MKNOD", () =>
    withEngine({ config: { image: healthzGitImage() } }, ({ remote }) =>
      Effect.gen(function* () {
        const row = yield* openRunning(remote.path, 1)
        const containerId = row.containerId ?? ""
        const dropped = inspectContainer(containerId).HostConfig.CapDrop ?? []
        assert.includeMembers([...dropped], ["MKNOD", "NET_RAW", "SETFCAP"])
        const workspace = row.environmentPlan?.workspaceFolder ?? "/workspace"
        for (const folder of [workspace, CONTAINER_HOME]) {
          const made = asRootIn(containerId, `mknod ${folder}/null c 1 3`)
          assert.notStrictEqual(made.status, 0, `mknod in ${folder} succeeded`)
        }
        assert.isFalse(existsSync(join(row.workspacePath ?? "", "null")))
      })
    )
  )

  it.live("a setuid copy of a shell left in the workspace and the home is out of every other host user's reach", () =>
    withEngine({ config: { image: healthzGitImage() } }, ({ home, remote }) =>
      Effect.gen(function* () {
        const row = yield* openRunning(remote.path, 1)
        const containerId = row.containerId ?? ""
        const workspace = row.environmentPlan?.workspaceFolder ?? "/workspace"
        for (const folder of [workspace, CONTAINER_HOME]) {
          const left = asRootIn(containerId, `cp /bin/sh ${folder}/rootsh && chmod 4755 ${folder}/rootsh`)
          assert.strictEqual(left.status, 0, left.stderr)
        }
        const onHost = [join(row.workspacePath ?? "", "rootsh"), join(statePaths(home).sandbox(row.id).home, "rootsh")]
        for (const path of onHost) {
          assert.strictEqual(statSync(path).mode & 0o4000, 0o4000, "the setuid bit was not left as the test expects")
          const run = asNobody(path)
          assert.notStrictEqual(run.stdout.trim(), "0", `${path} gave another user root`)
          assert.notStrictEqual(run.status, 0, `${path} ran for another user`)
        }
        // What keeps it out of reach: the folder holding both is root's alone, and so is the state folder.
        const sealed = statSync(statePaths(home).sandbox(row.id).sealed ?? "")
        assert.deepStrictEqual([sealed.uid, sealed.mode & 0o7777], [0, 0o700], "the sandbox's folder is not sealed")
        assert.strictEqual(statSync(home).mode & 0o077, 0, "the state folder is open to other users")
        assert.strictEqual(statSync(home).uid, process.getuid?.())
      })
    )
  )

  // Root two ways from the sandbox's own setup step: an untrusted image's passwordless sudo (a setuid-root
  // shell in the image), and a trusted repository's root user (its base branch configures it).
  const leaveRootShells = `cp /bin/sh ./rootsh && chmod 4755 ./rootsh && cp /bin/sh "$HOME/rootsh" && chmod 4755 "$HOME/rootsh"`
  const ways: ReadonlyArray<readonly [string, (remote: string, image: string) => Record<string, string>]> = [
    [
      "an untrusted image's passwordless sudo",
      (_remote, image) => ({
        ".devcontainer/devcontainer.json": JSON.stringify({
          build: { dockerfile: "Dockerfile" },
          postCreateCommand: `sudo-sh -p -c '${leaveRootShells}'`
        }),
        ".devcontainer/Dockerfile": `FROM ${image}\nRUN cp /bin/sh /usr/bin/sudo-sh && chmod 4755 /usr/bin/sudo-sh\n`
      })
    ],
    [
      "a trusted repository's root user",
      (_remote, image) => ({
        ".devcontainer/devcontainer.json": JSON.stringify({
          image,
          remoteUser: "root",
          containerUser: "root",
          postCreateCommand: leaveRootShells
        })
      })
    ]
  ]
  for (const [way, files] of ways) {
    it.live(`${way}: the setuid shells its setup leaves are out of every other host user's reach`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          // The image a Dockerfile built goes after the fixture's containers: it is this test's alone.
          const built = yield* Effect.acquireRelease(Ref.make(""), (image) =>
            Effect.map(Ref.get(image), (tag) => tag.startsWith("prbox-build/") && spawnSync("docker", ["rmi", tag]))
          )
          return yield* withEngine({ configFile: true }, ({ home, remote }) =>
            Effect.gen(function* () {
              const onBase = pushPullRequest(remote.path, 70, files(remote.path, healthzGitImage()))
              execFileSync("git", [`--git-dir=${remote.path}`, "update-ref", "refs/heads/main", onBase])
              writeFileSync(
                join(home, "config.json"),
                JSON.stringify({ image: healthzGitImage(), trustedRepositories: [`local${remote.path}`] })
              )
              const row = yield* openRunning(remote.path, 70)
              yield* Ref.set(built, row.environment?.image ?? "")
              assert.isNull(row.setupError, "the setup step did not run")
              const folders = statePaths(home).sandbox(row.id)
              for (const path of [join(folders.workspace, "rootsh"), join(folders.home, "rootsh")]) {
                assert.deepStrictEqual([statSync(path).uid, statSync(path).mode & 0o4000], [0, 0o4000])
                assert.notStrictEqual(asNobody(path).stdout.trim(), "0", `${path} gave another user root`)
              }
              const sealed = statSync(folders.sealed ?? "")
              assert.deepStrictEqual(
                [sealed.uid, sealed.mode & 0o7777],
                [0, 0o700],
                "the sandbox's folder is not sealed"
              )
            })
          )
        })
      )
    )
  }

  it.live("a folder chain deeper than a path may be, made by the sandbox's user, goes with its delete", () =>
    withEngine({ config: { image: healthzGitImage() } }, ({ home, remote }) =>
      Effect.gen(function* () {
        const row = yield* openRunning(remote.path, 1)
        const name = "d".repeat(200)
        // Nested from the top (a new folder takes the chain in), so no path the shell uses grows long.
        const deep = `mkdir ${name} && i=0 && while [ $i -lt 30 ]; do mkdir t && mv ${name} t/ && mv t ${name} || exit 1; i=$((i+1)); done`
        const made = spawnSync("docker", ["exec", row.containerId ?? "", "sh", "-c", deep], { encoding: "utf8" })
        assert.strictEqual(made.status, 0, made.stderr)
        yield* SandboxService.use((sandboxes) => sandboxes.delete(row.id))
        assert.isFalse(existsSync(statePaths(home).sandbox(row.id).root), "the sandbox's folder is still there")
      })
    )
  )
})

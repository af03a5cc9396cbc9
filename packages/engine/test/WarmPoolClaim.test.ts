import { assert, describe, it } from "@effect/vitest"
import type { PoolEntry, SandboxId } from "@prbox/domain"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { openRunning, withEngine } from "./harness.ts"
import { logOf, poolConfig, poolDevcontainer, primed } from "./pool-support.ts"
import { removePrebuildsOf, shInContainer } from "./prebuild-support.ts"

/** What reached one pool container, its port and its row from the moment it is watched. */
interface Seen {
  readonly execs: Array<string>
  readonly healthProbes: Array<number>
  readonly statusWrites: Array<string>
}

/** An exec by what it is: the git identity's, a probe of the user's environment, an extension's install, or another (a step, git). */
const kindOf = (argv: ReadonlyArray<string>): string =>
  argv.includes("prbox-git-identity")
    ? "git identity"
    : argv.includes("prbox-probe")
      ? "user env probe"
      : argv.includes("--install-extension")
        ? "extension install"
        : "other"

/** The pool's environment with an extension (none is reachable here: its install fails, and says so). */
const withExtension = JSON.stringify({
  ...JSON.parse(poolDevcontainer),
  customizations: { vscode: { extensions: ["prbox.absent"] } }
})

const IDENTITY = { name: "Pool User", email: "pool-user@example.test" }

describe("a claim of the warm pool", () => {
  it.live(
    "does only what the pool container did not do: no git identity, no probe of the user's environment, no extension install (its outcome is in the sandbox's log), no health probe, one status write (running); the claimed sandbox has the user's git identity all the same",
    () => {
      let watched: PoolEntry | undefined
      const seen: Seen = { execs: [], healthProbes: [], statusWrites: [] }
      const isWatched = (id: SandboxId) => watched !== undefined && id === watched.id
      return withEngine(
        {
          config: { ...poolConfig(2), git: IDENTITY },
          runtime: (real) => ({
            ...real,
            exec: (containerId, argv, options) => {
              if (watched !== undefined && containerId === watched.containerId) seen.execs.push(kindOf(argv))
              return real.exec(containerId, argv, options)
            }
          }),
          health: (real) => ({
            ...real,
            probe: (hostPort) => {
              if (watched !== undefined && hostPort === watched.hostPort) seen.healthProbes.push(hostPort)
              return real.probe(hostPort)
            }
          }),
          lifecycle: (real) => ({
            ...real,
            advance: (id, to, fields) => {
              if (isWatched(id)) seen.statusWrites.push(to)
              return real.advance(id, to, fields)
            },
            writeStatus: (id, to, fields) => {
              if (isWatched(id)) seen.statusWrites.push(to)
              return real.writeStatus(id, to, fields)
            }
          })
        },
        ({ home, remote }) =>
          Effect.gen(function* () {
            const { pool } = yield* primed(remote.path, withExtension)
            // The oldest ready entry is the one an open claims.
            const [oldest] = yield* pool.list
            if (oldest?.containerId === null || oldest?.hostPort === null) return assert.fail("a ready pool entry")
            pushPullRequest(remote.path, 1, { "pr.txt": "one" })
            watched = oldest
            const opened = yield* openRunning(remote.path, 1)
            watched = undefined
            assert.strictEqual(opened.id, oldest?.id, "claimed")
            assert.notInclude(seen.execs, "git identity", "written when the pool container was made")
            assert.notInclude(seen.execs, "user env probe", "probed when the pool container was made")
            assert.notInclude(seen.execs, "extension install", "installed when the pool container was made")
            assert.include(
              yield* logOf(opened),
              "extension prbox.absent could not be installed: ",
              "the pool container's outcome, in the sandbox's log"
            )
            assert.include(seen.execs, "other", "the PR's commits and its steps do run")
            assert.deepStrictEqual(seen.healthProbes, [], "code-server answered when the pool container was made")
            const untilRunning = seen.statusWrites.slice(0, seen.statusWrites.indexOf("running") + 1)
            assert.deepStrictEqual(untilRunning, ["running"], "the claim's one status write")
            const sandboxes = yield* SandboxService
            const row = yield* sandboxes.get(opened.id)
            assert.strictEqual(shInContainer(row, "git config --global user.name"), IDENTITY.name)
            assert.strictEqual(shInContainer(row, "git config --global user.email"), IDENTITY.email)
            assert.strictEqual(row.sourceBranch, "pr-1", "the claim wrote the PR's source")
          }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      )
    },
    600_000
  )
})

import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent, PullRequestNumber, type SandboxId, statePaths } from "@prbox/domain"
import type { SandboxRepo } from "@prbox/store"
import { Effect, type Scope, Stream } from "effect"
import type { LocalApi } from "../../../scripts/testing/local-api.ts"
import { localApi, lookup, type Reply, resolverLayer, type Seen } from "../../git/test/hostingApi.ts"
import { SandboxService } from "../src/index.ts"
import { bounded, type EngineFixture, filesContaining, inspectContainer, rowOf, withEngine } from "./harness.ts"

// Issue 16: the user's hosting-service token is read by the resolver and
// sent to the service, and goes nowhere else. The real resolver (Octokit)
// asks a local stand-in for GitHub's API (unreachable from here); git fetches
// github.com from a local bare repository (`url.<bare>.insteadOf`).

const REPOSITORY = "octocat/Hello-World"
const prUrl = (n: number) => `https://github.com/${REPOSITORY}/pull/${n}`
const TITLE = "Amazing new feature"

const SAVED_ENV = ["GH_TOKEN", "GITHUB_TOKEN", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"] as const

/**
 * The user's host, outside the prbox home: a global git config sending
 * github.com to the bare remote, and the token either in `GH_TOKEN` or
 * from a credential helper script. Everything restored when the test ends.
 */
const userHost = (bare: string, token: string, via: "env" | "helper") =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = SAVED_ENV.map((name) => [name, process.env[name]] as const)
      const dir = mkdtempSync(join(tmpdir(), "prbox-user-"))
      const helper = join(dir, "credential-helper")
      writeFileSync(helper, `#!/bin/sh\ntest "$1" = get && { echo username=octocat; echo password=${token}; }\n`)
      chmodSync(helper, 0o755)
      const gitconfig = join(dir, "gitconfig")
      writeFileSync(
        gitconfig,
        [
          `[url "${bare}"]`,
          `\tinsteadOf = https://github.com/${REPOSITORY}.git`,
          ...(via === "helper" ? ["[credential]", `\thelper = ${helper}`] : []),
          ""
        ].join("\n")
      )
      delete process.env.GITHUB_TOKEN
      if (via === "env") process.env.GH_TOKEN = token
      else delete process.env.GH_TOKEN
      process.env.GIT_CONFIG_GLOBAL = gitconfig
      process.env.GIT_CONFIG_NOSYSTEM = "1"
      return { saved, dir }
    }),
    ({ saved, dir }) =>
      Effect.sync(() => {
        for (const [name, value] of saved) {
          if (value === undefined) delete process.env[name]
          else process.env[name] = value
        }
        rmSync(dir, { recursive: true, force: true })
      })
  )

/** The head commit GitHub's reference example reports (the open reads the git ref's own). */
const HEAD_SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

/** `GET /repos/{owner}/{repo}/pulls/{pull_number}`: the fields of the REST API reference's example prbox reads. */
const pullJson = (number: number) => {
  const repo = { full_name: REPOSITORY, clone_url: `https://github.com/${REPOSITORY}.git` }
  return {
    number,
    state: "open",
    title: TITLE,
    user: { login: "octocat", id: 1, type: "User" },
    merged_at: null,
    head: { label: "octocat:new-topic", ref: "new-topic", sha: HEAD_SHA, repo },
    base: { label: "octocat:main", ref: "main", sha: HEAD_SHA, repo }
  }
}

/**
 * GitHub as a service that echoes the credential it was sent in every
 * refusal: the pull request for the right `token` header; `refuse` maps a
 * PR number to a refusal's status.
 */
const github =
  (token: string, refuse: Readonly<Record<string, number>> = {}) =>
  (seen: Seen): Reply => {
    const echo = (status: number, what: string) => ({
      status,
      json: { message: `${what} (asked with ${String(seen.headers.authorization)})`, status: String(status) }
    })
    if (seen.headers.authorization !== `token ${token}`) return echo(401, "Bad credentials")
    const number = new RegExp(`/repos/${REPOSITORY}/pulls/(\\d+)$`).exec(seen.url ?? "")?.[1] ?? ""
    const status = refuse[number]
    if (status !== undefined) return echo(status, status === 404 ? "Not Found" : "Server Error")
    return { status: 200, json: pullJson(Number(number)) }
  }

/** Every event line the engine publishes while the test's scope is open. */
const eventLines = Effect.gen(function* () {
  const lines: Array<string> = []
  const sandboxes = yield* SandboxService
  yield* Stream.runForEach(sandboxes.events, (event) => Effect.sync(() => lines.push(describeEvent(event)))).pipe(
    Effect.forkScoped({ startImmediately: true })
  )
  return lines
})

/** Opens `url` and waits for its worker; the row must be running. */
const openRunning = (url: string) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    const opened = yield* sandboxes.open({ input: url })
    yield* sandboxes.awaitIdle(opened.id).pipe(bounded("the create did not finish", 60))
    const row = yield* rowOf(opened.id)
    assert.strictEqual(row.status, "running", row.error ?? "")
    return row
  })

/** The sandbox's log, each line as shown and as stored. */
const logLines = (id: SandboxId) =>
  Effect.flatMap(SandboxService, (sandboxes) => sandboxes.logs(id, { limit: 10_000 })).pipe(
    Effect.map((events) => events.map((event) => `${describeEvent(event)} ${JSON.stringify(event)}`))
  )

/**
 * The token is in nothing prbox keeps or made: the home's files (the
 * database and its -wal, mirrors, workspaces with their .git, sandbox
 * homes), the rows, logs, events and containers. `stored` is text the test
 * knows the database holds: the byte scan really reads it.
 */
const assertNowhere = (
  token: string,
  home: string,
  stored: string,
  ids: ReadonlyArray<SandboxId>,
  events: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    const paths = statePaths(home)
    assert.isTrue(
      filesContaining(home, stored).some((path) => path.startsWith(paths.database)),
      `"${stored}" is in no database file`
    )
    assert.deepStrictEqual(filesContaining(home, token), [])
    for (const id of ids) {
      const row = yield* rowOf(id)
      assert.notInclude(JSON.stringify(row), token)
      assert.isTrue(existsSync(join(row.workspacePath ?? "", ".git", "config")))
      assert.isTrue(existsSync(paths.sandbox(id).home))
      assert.notInclude(JSON.stringify(inspectContainer(row.containerId ?? "")), token)
      const log = yield* logLines(id)
      assert.isAbove(log.length, 5)
      assert.deepStrictEqual(
        log.filter((line) => line.includes(token)),
        []
      )
    }
    assert.isAbove(events.length, 5)
    assert.deepStrictEqual(
      events.filter((line) => line.includes(token)),
      []
    )
  })

const newToken = () => `ghp_prboxHosting${randomBytes(16).toString("hex")}`

const pullAt = (n: number) => ({
  provider: "github" as const,
  host: "github.com",
  repository: REPOSITORY,
  pullRequest: PullRequestNumber.make(n)
})

/**
 * Runs `body` on an engine whose resolver is the real one (NodePullRequests)
 * asking a local stand-in for GitHub's API; the client is loaded by one
 * lookup first, as the open waits only briefly for the service.
 */
const withGitHub = <A, E>(
  token: string,
  via: "env" | "helper",
  refuse: Readonly<Record<string, number>>,
  body: (
    fixture: EngineFixture & { readonly api: LocalApi }
  ) => Effect.Effect<A, E, SandboxService | SandboxRepo | Scope.Scope>
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const api = yield* localApi(github(token, refuse))
      const resolver = () => resolverLayer({ apiBase: () => api.base })
      return yield* withEngine({ pullRequests: resolver() }, (fixture) =>
        Effect.scoped(
          Effect.gen(function* () {
            yield* userHost(fixture.remote.path, token, via)
            // Its own resolver (its own cache): the engine's still asks the service.
            yield* lookup(pullAt(1)).pipe(Effect.provide(resolver()))
            return yield* body({ ...fixture, api })
          })
        )
      )
    })
  )

describe("hosting-service secrets", () => {
  for (const via of ["env", "helper"] as const) {
    it.live(
      `a hosting-service token (${via === "env" ? "GH_TOKEN" : "git credential helper"}) never reaches a row, a log, an error or a container (local stand-in for GitHub's API)`,
      () => {
        const token = newToken()
        return withGitHub(token, via, {}, ({ remote, home, api }) =>
          Effect.gen(function* () {
            const events = yield* eventLines
            const row = yield* openRunning(prUrl(1))
            // The service's answer reached the row: the resolver was asked, with the user's token.
            assert.deepStrictEqual(
              [row.title, row.author, row.pullRequestState, row.sourceCommit],
              [TITLE, "octocat", "open", remote.pr1]
            )
            assert.strictEqual(api.seen.length, 2, "the warm-up's lookup and the open's")
            assert.isTrue(api.seen.every((seen) => seen.headers.authorization === `token ${token}`))
            yield* assertNowhere(token, home, TITLE, [row.id], events)
          })
        )
      }
    )
  }

  it.live(
    "a refusal that echoes the token (500, 401, 404) puts it in no log line, row or error (local stand-in for GitHub's API)",
    () => {
      const token = newToken()
      return withGitHub(token, "env", { "1": 500, "2": 401, "9": 404 }, ({ home, api }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const events = yield* eventLines
          // The service's refusals carry the token: the stand-in echoes it back.
          const server = yield* openRunning(prUrl(1))
          const refused = yield* openRunning(prUrl(2))
          const missing = yield* Effect.flip(sandboxes.open({ input: prUrl(9) }))
          assert.isAbove(api.seen.length, 3)

          // Each refusal is recorded, in the service's words where it gave them, redacted.
          assert.deepStrictEqual([server.title, refused.title], [null, null])
          const serverLog = yield* logLines(server.id)
          assert.isTrue(
            serverLog.some((line) => line.includes("github.com answered 500: Server Error (asked with token ***)")),
            serverLog.join("\n")
          )
          const refusedLog = yield* logLines(refused.id)
          assert.isTrue(
            refusedLog.some((line) => line.includes("github.com refused the credentials (401)")),
            refusedLog.join("\n")
          )
          assert.strictEqual(missing._tag, "PullRequestMissing")
          assert.include(missing.message, "Not Found (asked with token ***)")
          assert.notInclude(`${missing.message} ${JSON.stringify(missing)}`, token)
          assert.strictEqual((yield* sandboxes.listAll).length, 2)

          yield* assertNowhere(token, home, "github.com answered 500", [server.id, refused.id], events)
        })
      )
    }
  )
})

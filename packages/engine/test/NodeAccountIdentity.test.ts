import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { AccountIdentity, type AccountQuery } from "../src/index.ts"
import { NodeAccountIdentity } from "../src/node/index.ts"

interface Seen {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

/** A local stand-in for a hosted API (the real ones cannot be reached from here). */
const fakeApi = (answer: (seen: Seen, res: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly base: string; readonly seen: Array<Seen>; readonly close: () => void }>((resume) => {
      const seen: Array<Seen> = []
      const server = createServer((req, res) => {
        let body = ""
        req.on("data", (chunk: Buffer) => {
          body += chunk.toString()
        })
        req.on("end", () => {
          const request = { method: req.method, url: req.url, headers: req.headers, body }
          seen.push(request)
          answer(request, res)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ base: `http://127.0.0.1:${port}`, seen, close: () => server.close() }))
      })
    }),
    (api) => Effect.sync(api.close)
  )

const discover = (layer: ReturnType<typeof NodeAccountIdentity.layer>, query: AccountQuery) =>
  Effect.flatMap(AccountIdentity, (identity) => identity.discover(query)).pipe(Effect.provide(layer))

// git's credential helpers answer from the environment; prbox only asks.
const withCredentialHelper = (token: string) => {
  process.env.GIT_CONFIG_COUNT = "1"
  process.env.GIT_CONFIG_KEY_0 = "credential.helper"
  process.env.GIT_CONFIG_VALUE_0 = `!f() { echo username=u; echo password=${token}; }; f`
  process.env.GIT_CONFIG_NOSYSTEM = "1"
  process.env.GIT_CONFIG_GLOBAL = "/dev/null"
}

describe("NodeAccountIdentity against local fake APIs (hosted APIs unreachable here)", () => {
  it.live("GitHub: the token from git's credential helper names the user id", () =>
    Effect.scoped(
      Effect.gen(function* () {
        withCredentialHelper("tok-github-123")
        const api = yield* fakeApi((seen, res) => {
          // Octokit's header for a token (GitHub takes "token" and "Bearer" alike).
          const ok = seen.headers.authorization === "token tok-github-123" && seen.url === "/api/v3/user"
          res.writeHead(ok ? 200 : 401, { "content-type": "application/json" })
          res.end(JSON.stringify(ok ? { id: 583231, login: "octo" } : { message: "Bad credentials" }))
        })
        const layer = NodeAccountIdentity.layer({ apiBase: () => api.base })
        const account = yield* discover(layer, { provider: "github", host: "git.example.com", profile: undefined })
        assert.deepStrictEqual(account, Option.some("583231"))
        assert.strictEqual(api.seen[0]?.headers.accept, "application/vnd.github.v3+json")
      })
    )
  )

  it.live("GitLab: the token from git's credential helper names the user id, through Gitbeaker", () =>
    Effect.scoped(
      Effect.gen(function* () {
        withCredentialHelper("glpat-tok-456")
        const api = yield* fakeApi((seen, res) => {
          const ok = seen.headers.authorization === "Bearer glpat-tok-456" && seen.url === "/api/v4/user"
          res.writeHead(ok ? 200 : 401, { "content-type": "application/json" })
          res.end(
            JSON.stringify(ok ? { id: 1, username: "john_smith", state: "active" } : { message: "401 Unauthorized" })
          )
        })
        const layer = NodeAccountIdentity.layer({ apiBase: () => api.base })
        const account = yield* discover(layer, { provider: "gitlab", host: "gitlab.example.com", profile: undefined })
        assert.deepStrictEqual(account, Option.some("1"))
      })
    )
  )

  it.live("a refused token, or no answer at all, is 'unavailable', never an error", () =>
    Effect.scoped(
      Effect.gen(function* () {
        withCredentialHelper("tok-wrong")
        const api = yield* fakeApi((_seen, res) => {
          res.writeHead(401)
          res.end()
        })
        const refused = yield* discover(NodeAccountIdentity.layer({ apiBase: () => api.base }), {
          provider: "gitlab",
          host: "gitlab.example.com",
          profile: undefined
        })
        assert.isTrue(Option.isNone(refused))
        const unreachable = yield* discover(
          NodeAccountIdentity.layer({ apiBase: () => "http://127.0.0.1:9", timeoutMs: 2000 }),
          { provider: "github", host: "github.com", profile: undefined }
        )
        assert.isTrue(Option.isNone(unreachable))
      })
    )
  )

  it.live("CodeCommit: STS GetCallerIdentity, signed with the profile's credentials, names the account", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-aws-"))),
          (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
        )
        writeFileSync(
          join(dir, "credentials"),
          "[dev]\naws_access_key_id = AKIAPRBOXTESTKEY0001\naws_secret_access_key = prbox-test-secret\n"
        )
        writeFileSync(join(dir, "config"), "")
        process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, "credentials")
        process.env.AWS_CONFIG_FILE = join(dir, "config")
        const api = yield* fakeApi((seen, res) => {
          const signed = /Credential=AKIAPRBOXTESTKEY0001\/\d{8}\/eu-west-1\/sts\/aws4_request/.test(
            String(seen.headers.authorization)
          )
          const asked = seen.body.includes("Action=GetCallerIdentity")
          res.writeHead(signed && asked ? 200 : 403, { "content-type": "text/xml" })
          res.end(
            signed && asked
              ? "<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/dev</Arn>" +
                  "<UserId>AIDAPRBOX</UserId><Account>123456789012</Account></GetCallerIdentityResult>" +
                  "<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>"
              : "<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>"
          )
        })
        const account = yield* discover(NodeAccountIdentity.layer({ stsEndpoint: api.base }), {
          provider: "codecommit",
          host: "eu-west-1",
          profile: "dev"
        })
        assert.deepStrictEqual(account, Option.some("123456789012"), JSON.stringify(api.seen[0]?.headers))
      })
    )
  )
})

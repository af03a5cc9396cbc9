import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { localApi, refusingBase } from "../../../scripts/testing/local-api.ts"
import { AccountIdentity, type AccountQuery } from "../src/index.ts"
import { NodeAccountIdentity } from "../src/node/index.ts"

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
        const api = yield* localApi((seen) => {
          // Octokit's header for a token (GitHub takes "token" and "Bearer" alike).
          const ok = seen.headers.authorization === "token tok-github-123" && seen.url === "/api/v3/user"
          return { status: ok ? 200 : 401, json: ok ? { id: 583231, login: "octo" } : { message: "Bad credentials" } }
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
        const api = yield* localApi((seen) => {
          const ok = seen.headers.authorization === "Bearer glpat-tok-456" && seen.url === "/api/v4/user"
          return {
            status: ok ? 200 : 401,
            json: ok ? { id: 1, username: "john_smith", state: "active" } : { message: "401 Unauthorized" }
          }
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
        const api = yield* localApi(() => ({ status: 401 }))
        const refused = yield* discover(NodeAccountIdentity.layer({ apiBase: () => api.base }), {
          provider: "gitlab",
          host: "gitlab.example.com",
          profile: undefined
        })
        assert.isTrue(Option.isNone(refused))
        const closed = yield* refusingBase
        const unreachable = yield* discover(NodeAccountIdentity.layer({ apiBase: () => closed, timeoutMs: 2000 }), {
          provider: "github",
          host: "github.com",
          profile: undefined
        })
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
        const api = yield* localApi((seen) => {
          const signed = /Credential=AKIAPRBOXTESTKEY0001\/\d{8}\/eu-west-1\/sts\/aws4_request/.test(
            String(seen.headers.authorization)
          )
          const asked = seen.body.includes("Action=GetCallerIdentity")
          return {
            status: signed && asked ? 200 : 403,
            headers: { "content-type": "text/xml" },
            text:
              signed && asked
                ? "<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/dev</Arn>" +
                  "<UserId>AIDAPRBOX</UserId><Account>123456789012</Account></GetCallerIdentityResult>" +
                  "<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>"
                : "<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>"
          }
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

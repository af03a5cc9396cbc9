import { execFileSync } from "node:child_process"
import { createPrivateKey, randomBytes, sign, X509Certificate } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import { join } from "node:path"
import { Effect, type Scope } from "effect"

/**
 * A token server for a test registry's token auth (the distribution token
 * spec): the registry (scripts/testing/registry.ts, `token` option) sends
 * clients here with a Bearer challenge; this server hands out JWTs signed
 * with a key made for the run, whose certificate the registry trusts. Users
 * log in with Basic (user, password) or an identity token (the refresh-token
 * grant); anonymous clients get pull only when `anonymousPull`.
 */

export interface TokenServerOptions {
  readonly user: string
  readonly password: string
  /** The identity token (an OAuth refresh token) that stands for the user. */
  readonly identityToken: string
  readonly anonymousPull: boolean
}

export interface TokenServer {
  readonly realm: string
  readonly service: string
  readonly issuer: string
  /** The certificate the registry verifies tokens with. */
  readonly certPath: string
  /** The headers of every request the server got, in order. */
  readonly seen: ReadonlyArray<IncomingHttpHeaders>
  /** A token for `scope` as the user, for the publisher's pushes. */
  readonly tokenFor: (scope: string) => string
}

const SERVICE = "prbox-test-registry"
const ISSUER = "prbox-test-issuer"

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url")

/** `repository:<name>:<actions>` as the JWT's access claim, only the actions `allowed` keeps. */
const access = (scope: string, allowed: (action: string) => boolean) => {
  const match = /^repository:([^:]+):(.+)$/.exec(scope)
  if (match === null) return []
  const [, name = "", actions = ""] = match
  return [{ type: "repository", name, actions: actions.split(",").filter(allowed) }]
}

export const startTokenServer = (
  dir: string,
  options: TokenServerOptions
): Effect.Effect<TokenServer, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const keyPath = join(dir, "token-key.pem")
    const certPath = join(dir, "token-cert.pem")
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        keyPath,
        "-out",
        certPath,
        "-subj",
        "/CN=prbox-test-token",
        "-days",
        "1"
      ],
      { stdio: "ignore" }
    )
    const key = createPrivateKey(readFileSync(keyPath))
    const certificate = new X509Certificate(readFileSync(certPath))

    const jwt = (subject: string, scope: string, allowed: (action: string) => boolean) => {
      const now = Math.floor(Date.now() / 1000)
      const header = { typ: "JWT", alg: "RS256", x5c: [certificate.raw.toString("base64")] }
      const claims = {
        iss: ISSUER,
        sub: subject,
        aud: SERVICE,
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomBytes(8).toString("hex"),
        access: access(scope, allowed)
      }
      const signed = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`
      return `${signed}.${base64url(sign("sha256", Buffer.from(signed), key))}`
    }

    const basic = `Basic ${Buffer.from(`${options.user}:${options.password}`).toString("base64")}`
    const seen: Array<IncomingHttpHeaders> = []
    const server = createServer((request, response) => {
      seen.push(request.headers)
      let body = ""
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8")
      })
      request.on("end", () => {
        const url = new URL(request.url ?? "/", "http://127.0.0.1")
        const form = new URLSearchParams(body)
        const scope = (request.method === "POST" ? form.get("scope") : url.searchParams.get("scope")) ?? ""
        const refresh = request.method === "POST" && form.get("grant_type") === "refresh_token"
        const asUser = refresh
          ? form.get("refresh_token") === options.identityToken
          : request.headers.authorization === basic
        const denied = refresh || request.headers.authorization !== undefined ? !asUser : !options.anonymousPull
        if (url.pathname !== "/token" || denied) {
          response.writeHead(401, { "content-type": "application/json" }).end('{"details":"denied"}')
          return
        }
        const token = asUser ? jwt(options.user, scope, () => true) : jwt("", scope, (action) => action === "pull")
        // The refresh grant answers with `access_token`, the GET with `token`, as real token servers do.
        const answer = refresh ? { access_token: token, expires_in: 300 } : { token, expires_in: 300 }
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer))
      })
    })
    const port = yield* Effect.acquireRelease(
      Effect.callback<number, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      }),
      () => Effect.sync(() => server.close())
    )
    return {
      realm: `http://127.0.0.1:${port}/token`,
      service: SERVICE,
      issuer: ISSUER,
      certPath,
      seen,
      tokenFor: (scope) => jwt(options.user, scope, () => true)
    } satisfies TokenServer
  })

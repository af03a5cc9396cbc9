import { spawn } from "node:child_process"
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { parsePullRequestRef, Workspaces } from "../src/index.ts"
import { gitSync, makeRemote, tempDir, testGit, workspacesLayer } from "./helpers.ts"

const token = "prbox-test-token-7f3a9c2e51"
const basic = `Basic ${Buffer.from(`prbox:${token}`).toString("base64")}`

/**
 * `git http-backend` behind HTTP basic auth on 127.0.0.1: a smart-HTTP remote
 * that git reaches only through a credential helper.
 */
const gitHttpServer = (projectRoot: string) =>
  Effect.acquireRelease(
    Effect.callback<{ server: Http.Server; authorised: { count: number } }>((resume) => {
      const authorised = { count: 0 }
      const server = Http.createServer((request, response) => {
        if (request.headers.authorization !== basic) {
          response.writeHead(401, { "WWW-Authenticate": 'Basic realm="prbox-test"' }).end()
          return
        }
        authorised.count++
        const url = new URL(request.url ?? "/", "http://127.0.0.1")
        const cgi = spawn("git", ["http-backend"], {
          env: {
            PATH: process.env.PATH,
            GIT_CONFIG_NOSYSTEM: "1",
            GIT_CONFIG_GLOBAL: "/dev/null",
            GIT_PROJECT_ROOT: projectRoot,
            GIT_HTTP_EXPORT_ALL: "1",
            PATH_INFO: url.pathname,
            QUERY_STRING: url.search.slice(1),
            REQUEST_METHOD: request.method ?? "GET",
            CONTENT_TYPE: request.headers["content-type"] ?? "",
            HTTP_CONTENT_ENCODING: request.headers["content-encoding"] ?? "",
            GIT_PROTOCOL: String(request.headers["git-protocol"] ?? ""),
            REMOTE_USER: "prbox",
            REMOTE_ADDR: "127.0.0.1"
          }
        })
        request.pipe(cgi.stdin)
        const chunks: Array<Buffer> = []
        cgi.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
        cgi.on("close", () => {
          // CGI output: headers (one may be `Status`), a blank line, the body.
          const output = Buffer.concat(chunks)
          const split = output.indexOf("\r\n\r\n")
          const headerText = output.subarray(0, split).toString("latin1")
          let status = 200
          const headers: Record<string, string> = {}
          for (const line of headerText.split("\r\n")) {
            const [name = "", ...rest] = line.split(":")
            if (name.toLowerCase() === "status") status = Number.parseInt(rest.join(":").trim(), 10)
            else if (name !== "") headers[name] = rest.join(":").trim()
          }
          response.writeHead(status, headers).end(output.subarray(split + 4))
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, authorised })))
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** Every file under `dir` whose bytes contain `needle`. */
const filesContaining = (dir: string, needle: string): Array<string> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((entry) => NodePath.join(dir, entry))
    .filter((path) => statSync(path).isFile() && readFileSync(path).includes(needle))

describe("host credentials", () => {
  it.effect("are used for the fetch and written nowhere in the mirror or the workspace", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const { server, authorised } = yield* gitHttpServer(root)
      const { port } = server.address() as Net.AddressInfo
      const helper = NodePath.join(root, "credential-helper")
      writeFileSync(helper, `#!/bin/sh\ntest "$1" = get || exit 0\necho username=prbox\necho password=${token}\n`)
      chmodSync(helper, 0o755)
      // The user's own git configuration, as the daemon would inherit it.
      const git = testGit(
        (run) => (args, options) =>
          run(args, {
            ...options,
            env: {
              ...options.env,
              GIT_CONFIG_COUNT: "1",
              GIT_CONFIG_KEY_0: "credential.helper",
              GIT_CONFIG_VALUE_0: helper
            }
          })
      )
      const remoteUrl = `http://127.0.0.1:${port}/${NodePath.basename(remote.path)}`
      const ref = Result.getOrThrow(parsePullRequestRef(remoteUrl, { pr: 1 }))
      const destination = NodePath.join(root, "workspace")
      const progress: Array<string> = []
      const fetched = yield* Effect.gen(function* () {
        const fetched = yield* Workspaces.use((w) =>
          w.fetchPullRequest(ref, { onProgress: (line) => Effect.sync(() => void progress.push(line)) })
        )
        yield* Workspaces.use((w) =>
          w.createWorkspace({
            mirrorPath: fetched.mirrorPath,
            commit: fetched.commit,
            destination,
            originUrl: ref.remoteUrl,
            branchName: "pr-1"
          })
        )
        return fetched
      }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"), git)))

      assert.strictEqual(fetched.commit, remote.pr1)
      assert.isAbove(authorised.count, 0, "the fetch went through the credential helper")
      assert.strictEqual(gitSync(destination, "remote", "get-url", "origin"), remoteUrl)
      for (const secret of [token, basic.slice("Basic ".length)]) {
        assert.deepStrictEqual(filesContaining(destination, secret), [])
        assert.deepStrictEqual(filesContaining(fetched.mirrorPath, secret), [])
        assert.isFalse(progress.some((line) => line.includes(secret)))
      }
      assert.notInclude(readFileSync(NodePath.join(destination, ".git", "config"), "utf8"), "credential")
    })
  )

  it.effect("missing, the fetch fails as not found or access denied without prompting", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const remote = makeRemote(root)
      const { server } = yield* gitHttpServer(root)
      const { port } = server.address() as Net.AddressInfo
      const ref = Result.getOrThrow(
        parsePullRequestRef(`http://127.0.0.1:${port}/${NodePath.basename(remote.path)}`, { pr: 1 })
      )
      const error = yield* Workspaces.use((w) => w.fetchPullRequest(ref)).pipe(
        Effect.flip,
        Effect.provide(workspacesLayer(NodePath.join(root, "state")))
      )
      assert.strictEqual(error._tag, "RepositoryNotFound")
      assert.include(error.message, "not found or access was denied")
    })
  )
})

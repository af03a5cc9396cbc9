import { randomBytes } from "node:crypto"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, layer } from "@effect/vitest"
import { Docker, NodeDocker } from "@prbox/docker"
import { Effect, Layer, Schedule } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { debianBase, httpGet, scopedContainer } from "../../docker/test/fixtures.ts"
import {
  CODE_SERVER_VERSION,
  ensureCodeServerDistribution,
  GLIBC_LOADERS
} from "../src/node/tools/CodeServerDistribution.ts"
import { healthz, login, workbenchStatus } from "./probe.ts"

/** Built once by `scripts/setup --with-test-images` (global-setup passes where). */
const distDir = process.env.PRBOX_TEST_CODE_SERVER_DIST ?? ""
const MOUNT = "/opt/prbox/code-server"

const noProgress = () => Effect.void

layer(Layer.mergeAll(NodeServices.layer, NodeDocker.layer()), { excludeTestServices: true })(
  "the code-server distribution",
  (it) => {
    it.effect("is found where the tests' setup built it, without building again", () =>
      Effect.gen(function* () {
        assert.notStrictEqual(distDir, "", "PRBOX_TEST_CODE_SERVER_DIST is not set (scripts/testing/global-setup.ts)")
        const lines: Array<string> = []
        const dist = yield* ensureCodeServerDistribution({
          dir: distDir,
          onProgress: (line) => Effect.sync(() => void lines.push(line))
        })
        assert.deepStrictEqual(lines, [])
        assert.strictEqual(dist.version, CODE_SERVER_VERSION)
        assert.strictEqual(dist.node, "bin/node")
        assert.strictEqual(dist.entry, "lib/node_modules/code-server/out/node/entry.js")
        assert.strictEqual(dist.root, `${distDir}/${CODE_SERVER_VERSION}-node24.21.0-${process.arch}`)
      })
    )

    it.effect("is given a sandbox's password as a hash, the same for the same sandbox", () =>
      Effect.gen(function* () {
        const dist = yield* ensureCodeServerDistribution({ dir: distDir, onProgress: noProgress })
        const env = dist.passwordEnv("secret-password", "sbx1")
        assert.deepStrictEqual(Object.keys(env), ["HASHED_PASSWORD"])
        assert.match(env.HASHED_PASSWORD ?? "", /^\$argon2id\$v=19\$m=8,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
        assert.notInclude(env.HASHED_PASSWORD, "secret-password")
        assert.deepStrictEqual(dist.passwordEnv("secret-password", "sbx1"), env)
        assert.notDeepEqual(dist.passwordEnv("secret-password", "sbx2"), env)
        assert.notDeepEqual(dist.passwordEnv("secret-passwore", "sbx1"), env)
      })
    )

    it.effect(
      "runs read-only in a Debian image without code-server, as a non-root user, behind its real /login",
      () =>
        Effect.gen(function* () {
          const docker = yield* Docker
          const dist = yield* ensureCodeServerDistribution({ dir: distDir, onProgress: noProgress })
          const image = yield* debianBase
          const password = `pw-${randomBytes(8).toString("hex")}`
          const sandboxId = `sbx${randomBytes(4).toString("hex")}`
          const { id } = yield* scopedContainer({
            name: `prbox-test-dist-${randomBytes(4).toString("hex")}`,
            image,
            cmd: [
              `${MOUNT}/${dist.node}`,
              `${MOUNT}/${dist.entry}`,
              "--bind-addr",
              "0.0.0.0:8080",
              "--auth",
              "password"
            ],
            // The engine sets HOME (the image may not): code-server writes its config there.
            env: { ...dist.passwordEnv(password, sandboxId), HOME: "/home/coder" },
            binds: [{ hostPath: dist.root, containerPath: MOUNT, readOnly: true }],
            user: "1000:1000",
            exposedPort: 8080,
            init: true,
            labels: { [TEST_RUN_LABEL]: inject("testRunId") }
          })
          yield* docker.start(id)
          const { hostPort } = yield* docker.inspect(id)
          const port = hostPort ?? 0
          // Until code-server listens, the connection is refused or closed: retried.
          yield* httpGet(port, "/healthz").pipe(
            Effect.filterOrFail((response) => response.status === 200),
            Effect.retry({ schedule: Schedule.spaced(250), times: 240 })
          )
          const health = yield* healthz(port)
          assert.include(["alive", "expired"], health.body.status)
          const good = yield* login(port, password)
          assert.strictEqual(good.status, 302)
          const cookie = /code-server-session=[^;]+/.exec(good.headers.get("set-cookie") ?? "")?.[0] ?? ""
          assert.notStrictEqual(cookie, "")
          // The session lets the workbench in; the password as a session does not.
          assert.strictEqual(yield* workbenchStatus(port, cookie), 200)
          assert.strictEqual(yield* workbenchStatus(port, `code-server-session=${password}`), 302)
          const bad = yield* login(port, `${password}x`)
          assert.notStrictEqual(bad.status, 302)
          assert.notMatch(bad.headers.get("set-cookie") ?? "", /code-server-session=/)
          // The password is in the environment only: not on the command line.
          const ps = yield* docker.exec(id, {
            argv: ["ps", "-eo", "user:12,args"],
            timeoutMs: 10_000,
            maxOutputBytes: 65_536
          })
          assert.notInclude(ps.stdout, password)
          // Nor in the container's configuration: only its hash is.
          const inspected = yield* docker.exec(id, {
            argv: ["sh", "-c", "cat /proc/1/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n'"],
            timeoutMs: 10_000,
            maxOutputBytes: 1_048_576
          })
          assert.notInclude(inspected.stdout, password)
          assert.match(ps.stdout, /^1000\s+\/opt\/prbox\/code-server\/bin\/node/m)
          // The glibc loader the lead checks for exists in a glibc image.
          const loader = GLIBC_LOADERS[process.arch === "arm64" ? "arm64" : "x64"]
          const found = yield* docker.exec(id, {
            argv: ["test", "-e", loader],
            timeoutMs: 10_000,
            maxOutputBytes: 1024
          })
          assert.strictEqual(found.exitCode, 0)
        }),
      240_000
    )

    it.effect("names what to install when a build tool is missing", () =>
      Effect.gen(function* () {
        // npm on PATH, and nothing else: python3, make, g++ and the krb5 headers are missing.
        const bin = mkdtempSync(join(tmpdir(), "prbox-nobuildtools-"))
        writeFileSync(join(bin, "npm"), "#!/bin/sh\nexit 1\n")
        chmodSync(join(bin, "npm"), 0o755)
        const path = process.env.PATH
        const execPath = process.execPath
        process.env.PATH = bin
        // Not the running Node's npm either.
        Object.defineProperty(process, "execPath", { value: join(bin, "node"), configurable: true })
        const result = yield* ensureCodeServerDistribution({ dir: join(bin, "dist"), onProgress: noProgress }).pipe(
          Effect.flip,
          Effect.ensuring(
            Effect.sync(() => {
              process.env.PATH = path
              Object.defineProperty(process, "execPath", { value: execPath, configurable: true })
              rmSync(bin, { recursive: true, force: true })
            })
          )
        )
        assert.strictEqual(result._tag, "CodeServerUnavailable")
        assert.match(result.message, /needs python3, make, g\+\+, libkrb5-dev: install them/)
      })
    )
  }
)

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Result } from "effect"
import { type Credentials, NodeRegistryCredentials, RegistryCredentials } from "../src/index.ts"

// A real DOCKER_CONFIG folder and real credential helper programs on PATH, written by each test.

interface Home {
  readonly dir: string
  readonly bin: string
  readonly asked: string
  readonly env: NodeJS.ProcessEnv
}

const home = Effect.acquireRelease(
  Effect.sync((): Home => {
    const dir = mkdtempSync(join(tmpdir(), "prbox-docker-config-"))
    const bin = join(dir, "bin")
    mkdirSync(bin)
    const asked = join(dir, "asked")
    return { dir, bin, asked, env: { DOCKER_CONFIG: dir, PATH: `${bin}:${process.env.PATH ?? ""}` } }
  }),
  ({ dir }) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const writeConfig = (at: Home, config: unknown) => writeFileSync(join(at.dir, "config.json"), JSON.stringify(config))

/** A `docker-credential-<name>` script: records each registry it is asked for, then runs `body`. */
const helper = (at: Home, name: string, body: string) => {
  const path = join(at.bin, `docker-credential-${name}`)
  writeFileSync(
    path,
    `#!/bin/sh\n[ "$1" = get ] || exit 9\nread -r registry\necho "$registry" >> ${at.asked}\n${body}\n`
  )
  chmodSync(path, 0o755)
}

const askedFor = (at: Home): Array<string> => {
  try {
    return readFileSync(at.asked, "utf8").split("\n").filter(Boolean)
  } catch {
    return []
  }
}

const lookup = (at: Home, registry: string) =>
  Effect.flatMap(RegistryCredentials, (credentials) => Effect.result(credentials.forRegistry(registry))).pipe(
    Effect.provide(NodeRegistryCredentials.layer({ env: at.env }))
  )

const shown = (credentials: Credentials | undefined) =>
  credentials === undefined
    ? undefined
    : credentials._tag === "Password"
      ? { user: credentials.username, password: Redacted.value(credentials.password) }
      : { token: Redacted.value(credentials.token) }

/** A lookup's outcome with its secrets shown, for comparing. */
const outcome = (result: Result.Result<Credentials | undefined, { readonly message: string }>) =>
  Result.isSuccess(result) ? { found: shown(result.success) } : { failure: result.failure.message }

describe("the user's Docker credentials", () => {
  it.live("auths: the entry of the registry asked for, and no other", () =>
    Effect.gen(function* () {
      const at = yield* home
      const auth = Buffer.from("alice:s3cret").toString("base64")
      writeConfig(at, { auths: { "localhost:5000": { auth }, "https://other.example": { identitytoken: "tok" } } })
      const found = yield* lookup(at, "localhost:5000")
      assert.deepStrictEqual(outcome(found), { found: { user: "alice", password: "s3cret" } })
      const token = yield* lookup(at, "other.example")
      assert.deepStrictEqual(outcome(token), { found: { token: "tok" } })
      assert.deepStrictEqual(outcome(yield* lookup(at, "localhost:5001")), { found: undefined })
      // A printed Credentials shows no secret.
      if (Result.isSuccess(found))
        assert.notInclude(`${JSON.stringify(found.success)} ${String(found.success)}`, "s3cret")
    }).pipe(Effect.scoped)
  )

  it.live("credHelpers and credsStore: the helper is run with the registry on stdin", () =>
    Effect.gen(function* () {
      const at = yield* home
      helper(at, "prbox-test", `echo '{"ServerURL":"'$registry'","Username":"bob","Secret":"from-helper"}'`)
      helper(at, "prbox-store", `echo '{"Username":"<token>","Secret":"store-token"}'`)
      writeConfig(at, { credHelpers: { "localhost:5000": "prbox-test" }, credsStore: "prbox-store" })
      const found = yield* lookup(at, "localhost:5000")
      assert.deepStrictEqual(outcome(found), { found: { user: "bob", password: "from-helper" } })
      const stored = yield* lookup(at, "registry.example")
      assert.deepStrictEqual(outcome(stored), { found: { token: "store-token" } })
      assert.deepStrictEqual(askedFor(at), ["localhost:5000", "registry.example"])
    }).pipe(Effect.scoped)
  )

  it.live("a helper that keeps nothing for the registry: no credentials", () =>
    Effect.gen(function* () {
      const at = yield* home
      helper(at, "prbox-test", "echo 'credentials not found in native keychain'; exit 1")
      writeConfig(at, { credsStore: "prbox-test" })
      assert.deepStrictEqual(outcome(yield* lookup(at, "localhost:5000")), { found: undefined })
    }).pipe(Effect.scoped)
  )

  it.live("a failing or missing helper, or a broken config, is an error that shows none of its output", () =>
    Effect.gen(function* () {
      const at = yield* home
      helper(at, "prbox-broken", "echo 'leaked-secret'; echo 'stderr-secret' >&2; exit 3")
      helper(at, "prbox-garbled", "echo 'garbled-secret'")
      writeConfig(at, {
        credHelpers: { "a.example": "prbox-broken", "b.example": "prbox-absent", "c.example": "prbox-garbled" }
      })
      const details: Array<string> = []
      for (const [registry, pattern] of [
        ["a.example", /docker-credential-prbox-broken get exited 3/],
        ["b.example", /docker-credential-prbox-absent is not on PATH/],
        ["c.example", /docker-credential-prbox-garbled answered with something other than JSON/]
      ] as const) {
        const result = yield* lookup(at, registry)
        assert.isTrue(Result.isFailure(result), registry)
        if (Result.isFailure(result)) {
          assert.strictEqual(result.failure.registry, registry)
          assert.match(result.failure.message, pattern)
          details.push(JSON.stringify(result.failure), result.failure.message)
        }
      }
      assert.notInclude(details.join(" "), "secret")

      writeFileSync(join(at.dir, "config.json"), "{ not json")
      const broken = yield* lookup(at, "a.example")
      assert.isTrue(Result.isFailure(broken) && broken.failure.message.includes("is not valid JSON"))
    }).pipe(Effect.scoped)
  )

  it.live("no config.json: no credentials", () =>
    Effect.gen(function* () {
      const at = yield* home
      assert.deepStrictEqual(outcome(yield* lookup(at, "localhost:5000")), { found: undefined })
    }).pipe(Effect.scoped)
  )
})

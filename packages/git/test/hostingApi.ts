import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import type { PullRequestLookup } from "@prbox/domain"
import { Effect, Layer } from "effect"
import { NodePullRequests, type PullRequestLocation, PullRequests } from "../src/index.ts"

export { localApi, type Reply, refusingBase, type Seen } from "../../../scripts/testing/local-api.ts"

/** A temporary directory, removed when the test's scope closes. */
export const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(NodePath.join(tmpdir(), "prbox-hosting-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const credentialVariables = [
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "GH_ENTERPRISE_TOKEN",
  "GITHUB_ENTERPRISE_TOKEN",
  "GITLAB_TOKEN",
  "BITBUCKET_EMAIL",
  "BITBUCKET_API_TOKEN",
  "BITBUCKET_TOKEN",
  "GH_HOST",
  "GITLAB_HOST",
  "GL_HOST"
]

/**
 * The test's environment: only the given credential variables, and git
 * reading its configuration from a temporary HOME (with `helper` as its
 * credential helper script when given), never the machine's.
 */
export const hostEnvironment = (variables: Record<string, string>, helper?: string) =>
  Effect.gen(function* () {
    const home = yield* scratch
    for (const name of credentialVariables) delete process.env[name]
    Object.assign(process.env, variables)
    process.env.HOME = home
    process.env.GIT_CONFIG_NOSYSTEM = "1"
    delete process.env.GIT_CONFIG_GLOBAL
    delete process.env.GIT_CONFIG_COUNT
    if (helper !== undefined) {
      const script = NodePath.join(home, "credential-helper")
      writeFileSync(script, `#!/bin/sh\n${helper}\n`)
      chmodSync(script, 0o755)
      writeFileSync(NodePath.join(home, ".gitconfig"), `[credential]\n\thelper = ${script}\n`)
    } else {
      writeFileSync(NodePath.join(home, ".gitconfig"), "")
    }
    return home
  })

/** The resolver with the Node services it runs on. */
export const resolverLayer = (options: NodePullRequests.Options) =>
  NodePullRequests.layer(options).pipe(Layer.provide(NodeServices.layer))

/** Asks the resolver in context. */
export const lookup = (at: PullRequestLocation): Effect.Effect<PullRequestLookup, never, PullRequests> =>
  Effect.flatMap(PullRequests, (service) => service.lookup(at))

/** Each pull request's answer, from one resolver (one cache) for them all. */
export const lookupAll = <const L extends ReadonlyArray<PullRequestLocation>>(
  options: NodePullRequests.Options,
  locations: L
): Effect.Effect<{ -readonly [K in keyof L]: PullRequestLookup }> =>
  Effect.forEach(locations, lookup).pipe(Effect.provide(resolverLayer(options))) as Effect.Effect<
    // One answer per location, in order.
    { -readonly [K in keyof L]: PullRequestLookup }
  >

/** Each answer's state when known, else its tag. */
export const statesOf = (answers: ReadonlyArray<PullRequestLookup>) =>
  answers.map((answer) => (answer._tag === "Known" ? answer.info.state : answer._tag))

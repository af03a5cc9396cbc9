import type { EnvironmentPlan } from "@prbox/domain"
import { Git } from "@prbox/git"
import { Context, Effect, Layer } from "effect"
import { homeEnvFor } from "../CodeServerSpec.ts"
import { Config, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"

/** A git identity: each part absent when neither the host nor config.json gives it. */
export interface GitIdentityValues {
  readonly name: string | null
  readonly email: string | null
}

/**
 * The identity a sandbox's commits carry: config.json's `git.name` and
 * `git.email` over the host's own. Only these two: a credential helper, a
 * token or a signing key never goes in.
 */
export const sandboxIdentity = (host: GitIdentityValues, configured: PrboxConfig["git"]): GitIdentityValues => ({
  name: configured.name ?? host.name,
  email: configured.email ?? host.email
})

/**
 * Written by the sandbox's own git into its user's global config, the
 * values as arguments (never shell text), HOME and the XDG folders (the
 * rest, `NAME=value` each) exported first; commits there are unsigned. An
 * image without git has nothing to configure.
 */
export const IDENTITY_SH = `command -v git >/dev/null 2>&1 || exit 0
name=$1 email=$2
shift 2
for variable in "$@"; do export "$variable"; done
cd / || exit 1
if [ -n "$name" ]; then git config --global user.name "$name" || exit 1; fi
if [ -n "$email" ]; then git config --global user.email "$email" || exit 1; fi
git config --global commit.gpgsign false && git config --global tag.gpgsign false
`

/** The exec's argv that writes `identity` for a container of `plan` (IDENTITY_SH). */
export const identityArgv = (plan: EnvironmentPlan, identity: GitIdentityValues): ReadonlyArray<string> => [
  "/bin/sh",
  "-c",
  IDENTITY_SH,
  "prbox-git-identity",
  identity.name ?? "",
  identity.email ?? "",
  ...Object.entries(homeEnvFor(plan)).map(([key, value]) => `${key}=${value}`)
]

/**
 * `user.name` and `user.email` out of `git config -z --get-regexp`'s answer
 * (`key\nvalue` entries, NUL-ended); the last of a key wins, as `--get`'s.
 */
export const parseHostIdentity = (answer: string): GitIdentityValues => {
  let name: string | null = null
  let email: string | null = null
  for (const entry of answer.split("\0")) {
    const at = entry.indexOf("\n")
    const value = at < 0 ? "" : entry.slice(at + 1).trim()
    const key = (at < 0 ? entry : entry.slice(0, at)).toLowerCase()
    if (value === "") continue
    if (key === "user.name") name = value
    else if (key === "user.email") email = value
  }
  return { name, email }
}

const HOST_TIMEOUT_MS = 10_000

/** What a failed identity write says (to `warn`: the sandbox's log, or the daemon's for a pool container). */
export const IDENTITY_WARNING = "warning: the git identity could not be written in the sandbox"

/**
 * At a container's create (a pool container's: when it is made, since the
 * identity is the user's, not a PR's): the host's `user.name`/`user.email`
 * (its global git config, read in prbox's own state folder, never in a
 * workspace, in one git run), with config.json's over them (`values`),
 * into the sandbox user's git config (`write`, an exec of identityArgv; a
 * setup that probes the user's environment runs it in the probe's exec
 * instead). A failure is a warning (`warn`): the sandbox works without an identity.
 */
const make = Effect.gen(function* () {
  const git = yield* Git
  const runtime = yield* ContainerRuntime
  const { home } = yield* Config

  const values = (config: PrboxConfig) =>
    git
      .run(["config", "--global", "-z", "--get-regexp", "^user\\.(name|email)$"], {
        cwd: home,
        timeoutMs: HOST_TIMEOUT_MS
      })
      .pipe(
        // Exit 1: neither is set.
        Effect.map((output) =>
          output.exitCode === 0 ? parseHostIdentity(output.stdout) : { name: null, email: null }
        ),
        Effect.orElseSucceed((): GitIdentityValues => ({ name: null, email: null })),
        Effect.map((host) => sandboxIdentity(host, config.git))
      )

  const write = Effect.fn("SandboxService.gitIdentity")(function* (
    containerId: string,
    plan: EnvironmentPlan,
    user: string,
    identity: GitIdentityValues,
    warn: (line: string) => Effect.Effect<void>
  ) {
    const outcome = yield* runtime
      .exec(containerId, identityArgv(plan, identity), {
        user,
        cwd: "/",
        timeoutMs: HOST_TIMEOUT_MS,
        maxOutputBytes: 64 * 1024
      })
      .pipe(Effect.option)
    const failed = outcome._tag === "None" || outcome.value.exitCode !== 0
    if (failed) yield* warn(IDENTITY_WARNING)
  })

  return { values, write }
})

export class GitIdentity extends Context.Service<GitIdentity, Effect.Success<typeof make>>()(
  "prbox/engine/GitIdentity"
) {
  static readonly layer = Layer.effect(GitIdentity, make)
}

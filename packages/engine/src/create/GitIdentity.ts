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
 * values as arguments (never shell text); commits there are unsigned. An
 * image without git has nothing to configure.
 */
export const IDENTITY_SH = `command -v git >/dev/null 2>&1 || exit 0
if [ -n "$1" ]; then git config --global user.name "$1" || exit 1; fi
if [ -n "$2" ]; then git config --global user.email "$2" || exit 1; fi
git config --global commit.gpgsign false && git config --global tag.gpgsign false
`

const HOST_TIMEOUT_MS = 10_000

/** What a failed identity write says (to `warn`: the sandbox's log, or the daemon's for a pool container). */
const IDENTITY_WARNING = "warning: the git identity could not be written in the sandbox"

/**
 * At a container's create (a pool container's: when it is made, since the
 * identity is the user's, not a PR's): the host's `user.name`/`user.email`
 * (its global git config, read in prbox's own state folder, never in a
 * workspace), with config.json's over them, into the sandbox user's git
 * config. A failure is a warning (`warn`): the sandbox works without an identity.
 */
const make = Effect.gen(function* () {
  const git = yield* Git
  const runtime = yield* ContainerRuntime
  const { home } = yield* Config

  const hostValue = (key: string) =>
    git.run(["config", "--global", "--get", key], { cwd: home, timeoutMs: HOST_TIMEOUT_MS }).pipe(
      Effect.map((output) => (output.exitCode === 0 && output.stdout.trim() !== "" ? output.stdout.trim() : null)),
      Effect.orElseSucceed(() => null)
    )

  return Effect.fn("SandboxService.gitIdentity")(function* (
    containerId: string,
    plan: EnvironmentPlan,
    user: string,
    config: PrboxConfig,
    warn: (line: string) => Effect.Effect<void>
  ) {
    const host = { name: yield* hostValue("user.name"), email: yield* hostValue("user.email") }
    const identity = sandboxIdentity(host, config.git)
    const outcome = yield* runtime
      .exec(containerId, ["sh", "-c", IDENTITY_SH, "prbox-git-identity", identity.name ?? "", identity.email ?? ""], {
        user,
        cwd: "/",
        env: { ...homeEnvFor(plan) },
        timeoutMs: HOST_TIMEOUT_MS,
        maxOutputBytes: 64 * 1024
      })
      .pipe(Effect.option)
    const failed = outcome._tag === "None" || outcome.value.exitCode !== 0
    if (failed) yield* warn(IDENTITY_WARNING)
  })
})

export class GitIdentity extends Context.Service<GitIdentity, Effect.Success<typeof make>>()(
  "prbox/engine/GitIdentity"
) {
  static readonly layer = Layer.effect(GitIdentity, make)
}

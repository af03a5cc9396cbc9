import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert } from "@effect/vitest"
import type { SandboxId } from "@prbox/domain"
import { Effect } from "effect"
import { SandboxService } from "../src/index.ts"

export const HOST_TOKEN = "ghp_prboxIdentityFake0123456789"

/**
 * The host's global git config the way a developer has it: an identity, a
 * credential helper with a token, a signing key, and `extra` lines (say,
 * `insteadOf` rewrites standing in for a code host). GIT_CONFIG_GLOBAL
 * points at it while the scope is open, then is restored.
 */
export const hostGitConfig = (home: string, extra: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = process.env.GIT_CONFIG_GLOBAL
      const file = join(home, "identity.gitconfig")
      writeFileSync(
        file,
        [
          "[user]",
          "\tname = Host Person",
          "\temail = host@prbox.invalid",
          "\tsigningkey = ABCDEF0123456789",
          "[commit]",
          "\tgpgsign = true",
          "[credential]",
          `\thelper = "!f() { echo password=${HOST_TOKEN}; }; f"`,
          ...extra,
          ""
        ].join("\n")
      )
      process.env.GIT_CONFIG_GLOBAL = file
      return saved
    }),
    (saved) =>
      Effect.sync(() => {
        if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL
        else process.env.GIT_CONFIG_GLOBAL = saved
      })
  )

/** `script` through `sh -c` in the sandbox as its user; its stdout, the test failing on a non-zero exit. */
export const shIn = (id: SandboxId, script: string) =>
  Effect.flatMap(SandboxService, (sandboxes) =>
    sandboxes.exec(id, ["sh", "-c", script], { timeoutMs: 20_000, maxOutputBytes: 64 * 1024 })
  ).pipe(
    Effect.tap((outcome) => Effect.sync(() => assert.strictEqual(outcome.exitCode, 0, outcome.stderr))),
    Effect.map((outcome) => outcome.stdout.trim())
  )

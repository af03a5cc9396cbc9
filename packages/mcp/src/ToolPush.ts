import { type PushRefusal, type PushResult, pushLines, pushResult, refusedResult } from "@prbox/client"
import type { PushReport } from "@prbox/protocol"
import { Effect } from "effect"
import * as z from "zod"
import { asSandboxId, sandboxId } from "./Schemas.ts"
import { defineTool } from "./Tool.ts"
import { InvalidInput } from "./ToolErrors.ts"

const commit = z.object({
  commit: z.string(),
  author: z.string().describe("`name <email>`"),
  subject: z.string(),
  files: z.array(z.string())
})

/** The same shape as `prbox push --json` (client PushResult). */
const output = {
  sandbox: z.string(),
  remote: z.string().nullable().describe("where the commits go (never with a credential)"),
  branch: z.string().nullable(),
  head: z.string().nullable().describe("the PR's head the commits go on top of"),
  tip: z.string().nullable().describe("the sandbox's newest commit: pass it back as `tip` with `confirm: true`"),
  commits: z.array(commit).describe("newest first"),
  pushed: z.boolean(),
  refused: z
    .object({ kind: z.string(), reason: z.string(), changedFiles: z.array(z.string()).optional() })
    .nullable()
    .describe("why nothing was pushed, when the push was refused")
}

const render = (result: PushResult, shown: PushReport | undefined): string => {
  const lines = shown === undefined ? [] : pushLines(shown)
  const outcome =
    result.refused !== null
      ? `nothing pushed: ${result.refused.reason}`
      : result.pushed
        ? `pushed to ${result.branch} of ${result.remote}`
        : "not pushed: call again with confirm: true (and tip) to push these commits"
  return [...lines, outcome].join("\n")
}

/** `sandbox_push`: served only when the user's config.json says `"mcp": {"allowPush": true}`. */
export const pushTool = defineTool({
  name: "sandbox_push",
  title: "Push a sandbox's commits to its pull request",
  description: [
    "Show the sandbox's new commits on top of its PR's head (author, subject, files) and, with `confirm: true`, push them",
    "to the PR's branch with the user's own credentials (leased: refused if someone pushed meanwhile).",
    "Without `confirm: true` nothing is pushed: the result is the preview. Commit in the sandbox first (sandbox_exec `git commit`).",
    "A refusal is a result with `refused` (no new commits, not a fast-forward, uncommitted changes, the PR moved, the lease failed)."
  ].join(" "),
  input: {
    id: sandboxId,
    confirm: z.literal(true).optional().describe("push; absent: only show the commits"),
    tip: z
      .string()
      .regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/)
      .optional()
      .describe("the preview's tip: with confirm, refused if the sandbox's commits changed since"),
    to: z.string().min(1).max(255).optional().describe("a branch of the PR's remote (a plain git remote needs it)")
  },
  output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  run: (client, args, _extra, policy) =>
    Effect.gen(function* () {
      // The config may have changed since the server started: checked on every call.
      if (!(yield* policy.allowPush)) {
        return yield* new InvalidInput({
          message: 'sandbox_push is off: the user\'s config.json must say "mcp": {"allowPush": true}'
        })
      }
      const id = asSandboxId(args.id)
      const where = args.to === undefined ? {} : { to: args.to }
      let shown: PushReport | undefined
      const attempt = Effect.gen(function* () {
        shown = yield* client.push(id, { confirm: false, ...where })
        if (args.confirm !== true) return pushResult(shown)
        const pushed = yield* client.push(id, { confirm: true, expectTip: args.tip ?? shown.tip, ...where })
        return pushResult(pushed)
      })
      const result = yield* attempt.pipe(
        Effect.catchTag("PushRefused", (error) => {
          const refusal: PushRefusal = {
            kind: error.kind,
            reason: error.message,
            ...(error.changedFiles === undefined ? {} : { changedFiles: error.changedFiles })
          }
          return Effect.succeed(refusedResult(id, refusal, shown))
        })
      )
      // The output schema's own (mutable) form of the same result.
      const structured = {
        ...result,
        commits: result.commits.map((c) => ({ ...c, files: [...c.files] })),
        refused:
          result.refused === null
            ? null
            : {
                kind: result.refused.kind,
                reason: result.refused.reason,
                ...(result.refused.changedFiles === undefined ? {} : { changedFiles: [...result.refused.changedFiles] })
              }
      }
      return { structured, text: render(result, shown) }
    })
})

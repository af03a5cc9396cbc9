import { followUntilSettled, isLocalOpenInput, openRequest } from "@prbox/client"
import { describeEvent } from "@prbox/domain"
import { Effect } from "effect"
import * as z from "zod"
import { asSandboxId, describeSandbox, sandboxId, sandboxSummary, summaryOf } from "./Schemas.ts"
import { defineTool, type ToolExtra } from "./Tool.ts"
import { InvalidInput, Timeout } from "./ToolErrors.ts"

/** The tools of a sandbox's life: open, list, status, logs, stop. */

/** How long sandbox_open follows a sandbox before it answers `timeout` (a first image build can be slow). */
const OPEN_DEADLINE = "20 minutes"

/**
 * Sends each progress line as `notifications/progress` when the request
 * asked for progress (its `_meta.progressToken`); a notification that cannot
 * be delivered is not a failure of the open.
 */
const progressReporter = (extra: ToolExtra) => {
  const token = extra._meta?.progressToken
  let progress = 0
  return (message: string) => {
    if (token === undefined) return
    progress += 1
    extra
      .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message } })
      .catch(() => undefined)
  }
}

const open = defineTool({
  name: "sandbox_open",
  title: "Open a pull request in a sandbox",
  description: [
    "Open a pull request in its own Docker sandbox (a checkout of the PR head with its dev environment) and wait until it runs or fails.",
    "Opening a PR that already has a sandbox returns that sandbox (a stopped one is started again with its workspace).",
    "Use the returned id with the other sandbox_* tools. Sends progress notifications when the request carries a progressToken.",
    "On status `error`, read `error` and sandbox_logs."
  ].join(" "),
  input: {
    input: z
      .string()
      .min(1)
      .max(4096)
      .describe("the PR as `prbox open` takes it: a PR URL, `owner/repo#N`, or a git URL or local path with `pr`"),
    pr: z.number().int().positive().optional().describe("the PR number, for a plain git URL or path"),
    ref: z.string().min(1).max(1024).optional().describe("a ref to check out instead of the PR's head ref")
  },
  output: sandboxSummary,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  run: (client, args, extra, policy) =>
    Effect.gen(function* () {
      const since = Date.now()
      const report = progressReporter(extra)
      const request = openRequest(args.input, process.cwd(), { pr: args.pr, ref: args.ref })
      // Text in a PR can steer an agent: it opens what a user would, not any repository on this machine.
      if (isLocalOpenInput(request.input) && !(yield* policy.allowLocalPaths)) {
        return yield* new InvalidInput({
          message: `${args.input} is a repository on this machine; sandbox_open opens those only when the user's config.json says "mcp": {"allowLocalPaths": true}`
        })
      }
      const opened = yield* client.open(request)
      report(`sandbox ${opened.id} is ${opened.status}`)
      const settled = yield* followUntilSettled(client, opened, {
        since,
        onEvent: (event) => report(describeEvent(event))
      }).pipe(
        Effect.timeoutOrElse({
          duration: OPEN_DEADLINE,
          orElse: () =>
            Effect.fail(
              new Timeout({
                message: `sandbox ${opened.id} did not settle within ${OPEN_DEADLINE}; it keeps starting: watch it with sandbox_status`
              })
            )
        })
      )
      return { structured: summaryOf(settled), text: describeSandbox(settled) }
    })
})

const list = defineTool({
  name: "sandbox_list",
  title: "List sandboxes",
  description:
    "List the sandboxes prbox has (live ones; `all: true` adds those that ended): id, PR with its title, author and state (open, merged, closed) as the hosting service last said, status, head commit, URL.",
  input: { all: z.boolean().optional().describe("also list stopped and failed sandboxes") },
  output: { sandboxes: z.array(z.object(sandboxSummary)) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (client, args) =>
    Effect.map(client.list({ all: args.all === true }), (views) => ({
      structured: { sandboxes: views.map(summaryOf) },
      text: views.length === 0 ? "no sandboxes" : views.map(describeSandbox).join("\n")
    }))
})

const status = defineTool({
  name: "sandbox_status",
  title: "Sandbox status",
  description:
    "One sandbox's PR (title, author, state, base branch), status, head commit, URL, environment, and why it failed or why its setup stopped early (setupError).",
  input: { id: sandboxId },
  output: {
    ...sandboxSummary,
    setupError: z.string().nullable().describe("the setup step that failed; the sandbox still runs"),
    lastActivityAt: z.number().describe("milliseconds since the epoch; idle sandboxes are stopped by gc")
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (client, args) =>
    Effect.map(client.get(asSandboxId(args.id)), (view) => ({
      structured: { ...summaryOf(view), setupError: view.setupError, lastActivityAt: view.lastActivityAt },
      text: view.setupError === null ? describeSandbox(view) : `${describeSandbox(view)}\nsetup: ${view.setupError}`
    }))
})

const logs = defineTool({
  name: "sandbox_logs",
  title: "Sandbox progress log",
  description:
    "A sandbox's progress log (clone, image build, setup commands' output, status changes), a page at a time: pass `after: next` for the following page.",
  input: {
    id: sandboxId,
    after: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("the `next` of the previous page; 0 (the default) starts at the top"),
    limit: z.number().int().min(1).max(1000).optional().describe("lines of one page (default 200)")
  },
  output: {
    lines: z.array(z.object({ seq: z.number(), at: z.number(), status: z.string(), text: z.string() })),
    next: z.number().describe("pass as `after` to read on"),
    more: z.boolean().describe("more lines follow")
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (client, args) =>
    Effect.map(client.logs(asSandboxId(args.id), { after: args.after ?? 0, limit: args.limit ?? 200 }), (page) => {
      const lines = page.lines.map((event) => ({
        seq: event.seq,
        at: event.at,
        status: event.status,
        text: describeEvent(event)
      }))
      const tail = page.more ? `\n(more: after ${page.next})` : ""
      return {
        structured: { lines, next: page.next, more: page.more },
        text: `${lines.map((l) => l.text).join("\n")}${tail}`
      }
    })
})

const stop = defineTool({
  name: "sandbox_stop",
  title: "Stop or delete a sandbox",
  description:
    "Stop a sandbox: its container stops and its background jobs are killed; the workspace is kept and sandbox_open starts it again. `delete: true` removes it for good (container, workspace and its changes).",
  input: {
    id: sandboxId,
    delete: z.boolean().optional().describe("remove the sandbox and its workspace (its changes are lost)")
  },
  output: { id: z.string(), status: z.string().describe("stopped, or deleted") },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: (client, args) => {
    const id = asSandboxId(args.id)
    return args.delete === true
      ? Effect.as(client.delete(id, { force: true }), {
          structured: { id, status: "deleted" },
          text: `sandbox ${id} deleted`
        })
      : Effect.map(client.stop(id), (view) => ({
          structured: { id, status: view.status },
          text: `sandbox ${id} is ${view.status}`
        }))
  }
})

export const sandboxTools = [open, list, status, logs, stop] as const

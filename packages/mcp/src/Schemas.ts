import { displayText, markEnded, pullRequestTitle } from "@prbox/client"
import { PULL_REQUEST_STATES, type SandboxId } from "@prbox/domain"
import type { SandboxView } from "@prbox/protocol"
import * as z from "zod"

/** The zod shapes several tools share (the SDK publishes them as JSON Schema). */

export const sandboxId = z
  .string()
  .regex(
    /^[a-z0-9]{12}$/,
    "a sandbox id is 12 lowercase letters and digits, as sandbox_open and sandbox_list return it"
  )
  .describe("the sandbox's id, as sandbox_open or sandbox_list returns it")

/** The id as the client takes it (the schema above checked its form). */
export const asSandboxId = (id: string): SandboxId => id as SandboxId

export const workspacePath = z
  .string()
  .max(4096)
  .describe("a path relative to the workspace (the PR's checkout), e.g. `src/index.ts`; `.` is the workspace itself")

export const environment = z
  .object({
    kind: z.enum(["devcontainer", "config", "default"]),
    path: z.string().optional(),
    image: z.string(),
    imageDigest: z.string().nullable(),
    ignored: z
      .array(z.object({ property: z.string(), detail: z.string() }))
      .optional()
      .describe("what the PR's configuration asked for that widens the container and was left out, and why")
  })
  .nullable()
  .describe("what the container is made from; null until its image is known")

/** What every sandbox tool says about one sandbox. */
export const sandboxSummary = {
  id: z.string(),
  repository: z.string().describe("owner/name on its hosting service, or the repository's path"),
  pullRequest: z.number().int(),
  title: z.string().nullable().describe("the PR's title as its hosting service last gave it; null when not known"),
  author: z.string().nullable().describe("who opened the PR, as its hosting service names them; null when not known"),
  pullRequestState: z
    .enum(PULL_REQUEST_STATES)
    .nullable()
    .describe("the PR's state as its hosting service last said it; null when not known (never read as closed)"),
  baseRef: z.string().nullable().describe("the branch the PR merges into; null when not known"),
  status: z.string().describe("creating, cloning, starting, running, stopping, stopped or error"),
  headSha: z.string().nullable().describe("the PR head commit checked out in the workspace"),
  url: z.string().nullable().describe("code-server in a browser (the user's password is not given to tools)"),
  error: z.string().nullable().describe("why it failed, when status is error"),
  environment
}

export const summaryOf = (view: SandboxView) => ({
  id: view.id,
  repository: view.repository,
  pullRequest: view.pullRequest,
  title: pullRequestTitle(view),
  author: view.author === null ? null : displayText(view.author),
  pullRequestState: view.pullRequestState,
  baseRef: view.baseRef === null ? null : displayText(view.baseRef),
  status: view.status,
  headSha: view.sourceCommit,
  url: view.url,
  error: view.error,
  environment:
    view.environment === null
      ? null
      : {
          kind: view.environment.kind,
          ...(view.environment.path === undefined ? {} : { path: view.environment.path }),
          image: view.environment.image,
          imageDigest: view.environment.imageDigest,
          ...(view.environment.ignored === undefined
            ? {}
            : { ignored: view.environment.ignored.map(({ property, detail }) => ({ property, detail })) })
        }
})

/** One line of a sandbox for the model to read: `id owner/repo#12 "title" running · merged at <commit> <url>`. */
export const describeSandbox = (view: SandboxView): string =>
  [
    `${view.id} ${view.repository}#${view.pullRequest}`,
    pullRequestTitle(view) === null ? "" : ` ${JSON.stringify(pullRequestTitle(view))}`,
    ` ${markEnded(view.status, view)}`,
    view.sourceCommit === null ? "" : ` at ${view.sourceCommit.slice(0, 12)}`,
    view.url === null ? "" : ` ${view.url}`,
    view.error === null ? "" : ` (error: ${view.error})`
  ].join("")

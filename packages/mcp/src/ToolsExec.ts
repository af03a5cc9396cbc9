import type { ExecResult, JobOutput } from "@prbox/protocol"
import { MAX_EXEC_OUTPUT, MAX_READ_BYTES } from "@prbox/protocol"
import { Effect } from "effect"
import * as z from "zod"
import { asSandboxId, sandboxId, workspacePath } from "./Schemas.ts"
import { defineTool } from "./Tool.ts"
import { InvalidInput } from "./ToolErrors.ts"

/** Commands in a sandbox: run one and wait (bounded), or start a background job and read it. */

export const DEFAULT_TIMEOUT_MS = 120_000
export const MAX_TIMEOUT_MS = 600_000
export const DEFAULT_OUTPUT_BYTES = 32 * 1024

const env = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/), z.string().max(32 * 1024))
  .optional()
  .describe("extra environment variables for this command")

/** The command of a call: `argv` as is, or `command` through `sh -c`; exactly one of them. */
const argvOf = (args: {
  readonly argv?: ReadonlyArray<string> | undefined
  readonly command?: string | undefined
}): Effect.Effect<ReadonlyArray<string>, InvalidInput> =>
  args.argv !== undefined && args.command === undefined
    ? Effect.succeed(args.argv)
    : args.command !== undefined && args.argv === undefined
      ? Effect.succeed(["sh", "-c", args.command])
      : Effect.fail(new InvalidInput({ message: "pass exactly one of `argv` (an array) or `command` (a shell line)" }))

const describeExec = (result: ExecResult): string =>
  [
    `${result.timedOut ? "timed out (killed)" : `exit ${result.exitCode}`} after ${result.durationMs} ms${result.truncated ? ", output truncated (head and tail kept)" : ""}`,
    ...(result.stdout === "" ? [] : ["--- stdout ---", result.stdout]),
    ...(result.stderr === "" ? [] : ["--- stderr ---", result.stderr])
  ].join("\n")

const exec = defineTool({
  name: "sandbox_exec",
  title: "Run a command in a sandbox",
  description: [
    "Run a command in a running sandbox, in its workspace (or `cwd` inside it), as the sandbox's user, and wait for it.",
    "Pass `argv` (run as is) or `command` (run with `sh -c`). A non-zero exit is a normal result: read exitCode, stdout and stderr.",
    `Each of stdout and stderr is cut at maxOutputBytes (default ${DEFAULT_OUTPUT_BYTES}), keeping its head and tail.`,
    `At timeoutMs (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}) the command and its children are killed (timedOut: true).`,
    "For long commands (a test suite, a server) pass `background: true`: it returns a jobId at once; read the output with sandbox_job."
  ].join(" "),
  input: {
    id: sandboxId,
    argv: z
      .array(z.string().max(65536))
      .min(1)
      .max(1024)
      .optional()
      .describe('the program and its arguments, e.g. ["npm", "test"]'),
    command: z.string().min(1).max(65536).optional().describe("a shell command line, run with `sh -c`"),
    cwd: workspacePath.optional().describe("the folder to run in, relative to the workspace (default: the workspace)"),
    env,
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .optional()
      .describe(`milliseconds before the command is killed (default ${DEFAULT_TIMEOUT_MS})`),
    maxOutputBytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_EXEC_OUTPUT)
      .optional()
      .describe(`bytes kept of each of stdout and stderr (default ${DEFAULT_OUTPUT_BYTES})`),
    background: z.boolean().optional().describe("start it as a background job and return its jobId at once")
  },
  output: {
    exitCode: z
      .number()
      .int()
      .nullable()
      .optional()
      .describe("null when killed at the deadline (or a job still running)"),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
    truncated: z.boolean().optional().describe("output was cut: its head and tail are kept with a marker line between"),
    timedOut: z.boolean().optional().describe("the deadline passed and the command was killed"),
    durationMs: z.number().int().optional(),
    jobId: z.string().optional().describe("background: read it with sandbox_job"),
    status: z.string().optional().describe("background: the job's status")
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  run: (client, args) =>
    Effect.gen(function* () {
      const id = asSandboxId(args.id)
      const argv = yield* argvOf(args)
      const where = {
        ...(args.cwd === undefined ? {} : { cwd: args.cwd }),
        ...(args.env === undefined ? {} : { env: args.env })
      }
      if (args.background === true) {
        const job = yield* client.startJob(id, {
          argv,
          ...where,
          ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs })
        })
        return {
          structured: { jobId: job.jobId, status: job.status, exitCode: job.exitCode },
          text: `job ${job.jobId} ${job.status}; read its output with sandbox_job {id: "${id}", jobId: "${job.jobId}"}`
        }
      }
      const result = yield* client.exec(id, {
        argv,
        ...where,
        timeoutMs: args.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxOutputBytes: args.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES
      })
      return { structured: { ...result }, text: describeExec(result) }
    })
})

const describeJob = (read: JobOutput): string =>
  [
    read.output,
    `--- job ${read.job.jobId} ${read.job.status}${read.job.exitCode === null ? "" : ` (exit ${read.job.exitCode})`}; ` +
      (read.more || read.job.status === "running"
        ? `read on with offset ${read.nextOffset}`
        : `all output read (offset ${read.nextOffset})`)
  ].join("\n")

const job = defineTool({
  name: "sandbox_job",
  title: "Read a background job",
  description: [
    "Read a background job's output (stdout and stderr interleaved) from `offset`, and its status:",
    "running, exited (see exitCode), timed-out, killed (by its sandbox stopping), or lost (prbox restarted while it ran).",
    "Call again with offset = nextOffset until status is not running and more is false.",
    "`offset` is larger than asked when the oldest output is no longer kept."
  ].join(" "),
  input: {
    id: sandboxId,
    jobId: z.string().min(1).max(64).describe("the jobId sandbox_exec returned"),
    offset: z.number().int().min(0).optional().describe("the byte offset to read from (default 0)"),
    maxBytes: z.number().int().min(1).max(MAX_READ_BYTES).optional().describe("bytes of output to return at most")
  },
  output: {
    jobId: z.string(),
    status: z.string(),
    exitCode: z.number().int().nullable(),
    argv: z.array(z.string()),
    offset: z.number().int(),
    output: z.string(),
    nextOffset: z.number().int(),
    more: z.boolean().describe("more output is already there past nextOffset")
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (client, args) =>
    Effect.map(
      client.readJob(asSandboxId(args.id), args.jobId, {
        ...(args.offset === undefined ? {} : { offset: args.offset }),
        ...(args.maxBytes === undefined ? {} : { maxBytes: args.maxBytes })
      }),
      (read) => ({
        structured: {
          jobId: read.job.jobId,
          status: read.job.status,
          exitCode: read.job.exitCode,
          argv: [...read.job.argv],
          offset: read.offset,
          output: read.output,
          nextOffset: read.nextOffset,
          more: read.more
        },
        text: describeJob(read)
      })
    )
})

export const execTools = [exec, job] as const

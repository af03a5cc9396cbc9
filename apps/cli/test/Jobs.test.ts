import { JobList, JobView } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { countSleepsArgv } from "../../../scripts/testing/processes.ts"
import { decode, makeHome, prbox, tearDown } from "./support.ts"

let home: string
let remote: TestRemote
let id = ""

beforeAll(() => {
  home = makeHome("cli-jobs")
  remote = makeRemote(home)
})

afterAll(async () => {
  await tearDown(home)
})

describe("prbox exec options and background jobs against a real daemon", () => {
  it("opens a sandbox", async () => {
    const run = await prbox(home, ["open", remote.path, "--pr", "1"])
    expect(run.code, run.stderr).toBe(0)
    id = /sandbox ([a-z0-9]{12}) is running/.exec(run.stdout)?.[1] ?? ""
    expect(id).not.toBe("")
  })

  it("exec runs in --cwd with --env; a cwd out of the workspace is refused as bad input", async () => {
    const made = await prbox(home, ["exec", id, "--", "sh", "-c", "mkdir -p sub && ln -s /etc out"])
    expect(made.code, made.stderr).toBe(0)
    const run = await prbox(home, [
      "exec",
      id,
      "--cwd",
      "sub",
      "--env",
      "A=1",
      "--env",
      "B=2",
      "--",
      "sh",
      "-c",
      'pwd; echo "$A$B"'
    ])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/\/sub\n12\n$/)
    for (const cwd of ["../", "out"]) {
      const refused = await prbox(home, ["exec", id, "--cwd", cwd, "--", "pwd"])
      expect(refused.code, cwd).toBe(2)
      expect(refused.stderr).toContain("workspace")
    }
  })

  it("exec kills a command at --timeout and exits 124", async () => {
    const run = await prbox(home, ["exec", id, "--timeout", "1", "--", "sh", "-c", "echo begun; sleep 1000.42"])
    expect(run.code).toBe(124)
    expect(run.stdout).toBe("begun\n")
    expect(run.stderr).toContain("was killed")
    const left = await prbox(home, ["exec", id, "--", ...countSleepsArgv("1000.42")])
    expect(left.stdout.trim()).toBe("0")
  })

  it("--background prints a job id; job -f prints its output and exits with its code; jobs lists it", async () => {
    const started = await prbox(home, ["exec", id, "--background", "--", "sh", "-c", "echo one; echo two; exit 5"])
    expect(started.code, started.stderr).toBe(0)
    const jobId = started.stdout.trim()
    expect(jobId).toMatch(/^j-[0-9a-f]{8}$/)
    const followed = await prbox(home, ["job", id, jobId, "-f"])
    expect(followed.stdout).toBe("one\ntwo\n")
    expect(followed.code).toBe(5)
    const listed = decode(JobList, (await prbox(home, ["jobs", id, "--json"])).stdout)
    expect(listed.map((job) => [job.jobId, job.status, job.exitCode])).toEqual([[jobId, "exited", 5]])
  })

  it("job --kill kills a running job", async () => {
    const started = await prbox(home, ["exec", id, "--background", "--json", "--", "sleep", "1000.43"])
    const job = decode(JobView, started.stdout)
    expect(job.status).toBe("running")
    const killed = decode(JobView, (await prbox(home, ["job", id, job.jobId, "--kill", "--json"])).stdout)
    expect(killed.status).toBe("killed")
    const missing = await prbox(home, ["job", id, "j-00000000"])
    expect(missing.code).toBe(3)
  })
})

import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { makeHome, prbox, removeHome } from "./support.ts"

const homes: Array<string> = []
const home = (config: Record<string, unknown> = {}) => {
  const made = makeHome("engine", config)
  homes.push(made)
  return made
}
afterEach(() => {
  for (const made of homes.splice(0)) removeHome(made)
})

/** `doctor --json` with nothing from the test's environment choosing the engine but `env`. */
const doctor = async (prboxHome: string, env: Record<string, string> = {}) => {
  const run = await prbox(prboxHome, ["doctor", "--json"], {
    DOCKER_CONFIG: join(prboxHome, "docker-config"),
    DOCKER_HOST: "",
    DOCKER_CONTEXT: "",
    ...env
  })
  const report = JSON.parse(run.stdout) as {
    readonly checks: ReadonlyArray<{ readonly name: string; readonly level: string; readonly detail: string }>
    readonly engine: Record<string, unknown>
  }
  return { run, report, check: (name: string) => report.checks.find((check) => check.name === name) }
}

/** A Docker context in `<home>/docker-config`, filed as Docker files it (sha256 of its name). */
const writeContext = (prboxHome: string, name: string, host: string) => {
  const dir = join(prboxHome, "docker-config", "contexts", "meta", createHash("sha256").update(name).digest("hex"))
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, "meta.json"),
    JSON.stringify({ Name: name, Metadata: {}, Endpoints: { docker: { Host: host } } })
  )
}

const probeContainers = () =>
  execFileSync("docker", ["ps", "-aq", "--filter", "label=dev.prbox.probe"], { encoding: "utf8" }).trim()

describe("doctor's engine check", () => {
  it("the local engine: its address, where it came from, its version, and local by the bind-mount probe", async () => {
    const prboxHome = home()
    const { report, check } = await doctor(prboxHome)
    expect(report.engine).toMatchObject({
      address: "unix:///var/run/docker.sock",
      source: "default",
      location: "local",
      version: expect.any(String),
      apiVersion: expect.any(String)
    })
    expect(check("engine")?.level).toBe("ok")
    expect(check("engine")?.detail).toMatch(/^unix:\/\/\/var\/run\/docker\.sock \(default\): local; /)
    // The probe's folder and container are gone.
    expect(readdirSync(prboxHome).filter((name) => name.startsWith("engine-probe-"))).toEqual([])
    expect(probeContainers()).toBe("")
  })

  it("an engine that cannot be reached, named by config.json: both docker and engine checks fail, saying which", async () => {
    const prboxHome = home({ runtime: { docker: { host: "unix:///nonexistent/docker.sock" } } })
    const { run, report, check } = await doctor(prboxHome, { DOCKER_HOST: "unix:///var/run/docker.sock" })
    expect(run.code).toBe(1)
    expect(report.engine).toMatchObject({
      address: "unix:///nonexistent/docker.sock",
      source: "config",
      version: null,
      location: "unknown"
    })
    expect(check("docker")?.level).toBe("fail")
    expect(check("engine")).toMatchObject({ level: "fail" })
    expect(check("engine")?.detail).toMatch(/^unix:\/\/\/nonexistent\/docker\.sock \(config\): cannot be reached/)
  })

  it("the current Docker context names the engine; a context that does not exist is a clear failure", async () => {
    const prboxHome = home()
    writeContext(prboxHome, "elsewhere", "unix:///nonexistent/other.sock")
    const viaContext = await doctor(prboxHome, { DOCKER_CONTEXT: "elsewhere" })
    expect(viaContext.report.engine).toMatchObject({
      address: "unix:///nonexistent/other.sock",
      source: "context elsewhere"
    })
    const missing = await doctor(prboxHome, { DOCKER_CONTEXT: "gone" })
    expect(missing.check("engine")).toMatchObject({ level: "fail" })
    expect(missing.check("engine")?.detail).toContain(
      'DOCKER_CONTEXT names the Docker context "gone", which does not exist (known: default, elsewhere)'
    )
  })
})

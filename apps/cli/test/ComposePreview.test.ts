import { DefaultImage } from "@prbox/engine/node"
import { PortList } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, pushPullRequest, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { databaseImage } from "../../../scripts/images/database.ts"
import { healthzImage } from "../../../scripts/images/healthz.ts"
import { ensureImage, imageTag } from "../../../scripts/images/images.ts"
import { preview, previewHome, tokenOf } from "./preview-support.ts"
import { call, decode, prbox, socketOf, tearDown } from "./support.ts"

/**
 * A Compose sandbox's other services through the real daemon's preview
 * server: `web` (a small HTTP server, the healthz image) is reached from the
 * app's container by its service name, at its own host and path forms, with
 * the app's auth rules; a name the sandbox's app does not reach is refused.
 */

let home: string
let remote: TestRemote
let id = ""
let previewPort = 0
let token = ""

beforeAll(async () => {
  home = previewHome("compose-preview")
  remote = makeRemote(home)
  pushPullRequest(remote.path, 1, {
    ".devcontainer/devcontainer.json": JSON.stringify({
      dockerComposeFile: "docker-compose.yml",
      service: "app",
      workspaceFolder: "/workspaces/app",
      forwardPorts: ["web:8080"]
    }),
    ".devcontainer/docker-compose.yml": [
      "services:",
      "  app:",
      `    image: ${DefaultImage.DEFAULT_IMAGE}`,
      "    command: sleep infinity",
      "  web:",
      `    image: ${imageTag(healthzImage)}`,
      "  db:",
      `    image: ${await ensureImage(databaseImage)}`,
      '    expose: ["6379"]',
      ""
    ].join("\n")
  })
  const run = await prbox(home, ["open", remote.path, "--pr", "1"])
  id = /sandbox ([a-z0-9]{12}) is running/.exec(run.stdout)?.[1] ?? ""
  if (id === "") throw new Error(`open failed: ${run.stdout}${run.stderr}`)
  token = await tokenOf(home, id)
  const listed = await prbox(home, ["ports", id, "--json"])
  previewPort = decode(PortList, listed.stdout).previewPort
}, 600_000)

afterAll(async () => {
  if (id !== "") await prbox(home, ["rm", id, "--force"])
  await tearDown(home)
}, 120_000)

const bearer = () => ({ authorization: `Bearer ${token}` })
const webHost = () => `8080.web.${id}.localhost:${previewPort}`

describe("previews of a Compose sandbox's other services", () => {
  it("`prbox ports` lists them with the service named, and --json gives their URLs", async () => {
    const json = await prbox(home, ["ports", id, "--json"])
    const services = decode(PortList, json.stdout).ports.filter((port) => port.service !== undefined)
    expect(services.map((port) => [port.service, port.port, port.source, port.listening])).toEqual([
      ["web", 8080, "devcontainer", true],
      ["db", 6379, "compose", true]
    ])
    expect(services[0]?.url).toBe(`http://8080.web.${id}.localhost:${previewPort}/`)
    expect(services[0]?.pathUrl).toBe(`http://localhost:${previewPort}/s/${id}/web:8080/`)
    const table = await prbox(home, ["ports", id])
    expect(table.stdout).toMatch(new RegExp(`^web:8080 +- +devcontainer +yes +private +http://8080\\.web\\.${id}`, "m"))
    expect(table.stdout).toMatch(/^db:6379 +- +compose +yes /m)
  })

  it("serves the service's HTTP at its host form and path form, with the sandbox's token only", async () => {
    const hosted = await preview(previewPort, { host: webHost(), path: "/healthz", headers: bearer() })
    expect(hosted.status, hosted.text).toBe(200)
    expect(hosted.text).toContain("alive")
    const pathed = await preview(previewPort, {
      host: `localhost:${previewPort}`,
      path: `/s/${id}/web:8080/healthz`,
      headers: bearer()
    })
    expect(pathed.status, pathed.text).toBe(200)
    expect(pathed.text).toContain("alive")
    const anonymous = await preview(previewPort, { host: webHost(), path: "/healthz" })
    expect(anonymous.status).toBe(401)
  })

  it("opens a service's port to everyone on its own, never through the app's port of the same number", async () => {
    const open = await prbox(home, ["ports", id, "--public", "8080"])
    expect(open.code, open.stderr).toBe(0)
    expect((await preview(previewPort, { host: webHost(), path: "/healthz" })).status).toBe(401)
    const service = await prbox(home, ["ports", id, "--public", "web:8080"])
    expect(service.code, service.stderr).toBe(0)
    expect((await preview(previewPort, { host: webHost(), path: "/healthz" })).status).toBe(200)
    await prbox(home, ["ports", id, "--private", "web:8080"])
    expect((await preview(previewPort, { host: webHost(), path: "/healthz" })).status).toBe(401)
    const unknown = await prbox(home, ["ports", id, "--public", "cache:80"])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain('no service "cache"')
    const hostile = await prbox(home, ["ports", id, "--public", "host.docker.internal:80"])
    expect(hostile.stderr).toContain("is not a service name a preview can reach")
  })

  it("refuses a service the app does not reach, and any name that is not a plain service name", async () => {
    const unknown = await preview(previewPort, { host: `80.cache.${id}.localhost:${previewPort}`, headers: bearer() })
    expect(unknown.status).toBe(404)
    expect((JSON.parse(unknown.text) as { message: string }).message).toBe(
      `sandbox ${id} has no service "cache" to preview: the app reaches only db, web by name`
    )
    for (const host of [
      `80.host.docker.internal.${id}.localhost:${previewPort}`,
      `80.172.17.0.1.${id}.localhost:${previewPort}`,
      `80.localhost.${id}.localhost:${previewPort}`
    ]) {
      expect((await preview(previewPort, { host, headers: bearer() })).status, host).toBe(403)
    }
    for (const segment of ["host.docker.internal:80", "172.17.0.1:80", "[::1]:80", "db.:6379", "app:8080"]) {
      const answer = await preview(previewPort, {
        host: `localhost:${previewPort}`,
        path: `/s/${id}/${segment}/`,
        headers: bearer()
      })
      expect(answer.status, segment).toBe(404)
    }
    const own = await preview(previewPort, {
      host: `localhost:${previewPort}`,
      path: `/s/${id}/app:8080/`,
      headers: bearer()
    })
    expect(own.text).toContain("it is the sandbox's own container")
    // The socket API's own list names the same URLs.
    const listed = await call(socketOf(home), { path: `/v1/sandboxes/${id}/ports` })
    expect(listed.text).toContain(`http://6379.db.${id}.localhost:${previewPort}/`)
  })
})

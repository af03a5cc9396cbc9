import { assert, describe, it } from "@effect/vitest"
import {
  declaredServicePorts,
  forwardedServicePort,
  isPreviewServiceName,
  originAllowed,
  type PreviewTarget,
  parsePreviewPath,
  previewPathUrl,
  previewTarget,
  previewUrl,
  type ReachableService,
  SandboxId,
  servicePreviewPorts,
  serviceRefusal
} from "@prbox/domain"

const PP = 47100
const ID = "abc123def456"
const OTHER = "zzz999yyy888"
const sandboxId = SandboxId.make(ID)
const at = (port: number, service?: string, id: string = ID): PreviewTarget => ({
  _tag: "HostForm",
  sandboxId: SandboxId.make(id),
  port,
  ...(service === undefined ? {} : { service })
})
const foreign: PreviewTarget = { _tag: "Foreign" }

describe("isPreviewServiceName", () => {
  it.each<readonly [string, boolean]>([
    ["db", true],
    ["redis-cache", true],
    ["my_service", true],
    ["web2", true],
    [`a${"b".repeat(62)}`, true],
    [`a${"b".repeat(63)}`, false],
    // Never an address, nor a name that reaches past the project.
    ["host.docker.internal", false],
    ["db.example.com", false],
    ["172.17.0.1", false],
    ["2130706433", false],
    ["0x7f000001", false],
    ["::1", false],
    ["[::1]", false],
    ["fe80::1", false],
    ["db:5432", false],
    ["localhost", false],
    // Compose allows more than previews take.
    ["DB", false],
    ["1db", false],
    ["-db", false],
    ["_db", false],
    ["d b", false],
    ["db\n", false],
    ["", false]
  ])("%j → %s", (name, expected) => {
    assert.strictEqual(isPreviewServiceName(name), expected)
  })
})

describe("serviceRefusal", () => {
  const reachable: ReadonlyArray<ReachableService> = [
    { service: "db", ports: [5432] },
    { service: "cache", ports: [] }
  ]
  it.each<readonly [string, string | undefined, ReadonlyArray<ReachableService> | undefined, string | undefined]>([
    ["db", "app", reachable, undefined],
    ["cache", "app", reachable, undefined],
    ["queue", "app", reachable, "the app reaches only db, cache by name"],
    ["queue", "app", [], "the app reaches no other service by name"],
    ["app", "app", reachable, "it is the sandbox's own container: its ports need no service"],
    ["db", undefined, undefined, "the sandbox has no Compose services"],
    ["db", "app", undefined, "the sandbox was made before service previews: `prbox rebuild` gives it them"],
    ["host.docker.internal", "app", reachable, "it is not a service name previews can reach"],
    ["172.17.0.1", "app", reachable, "it is not a service name previews can reach"],
    ["localhost", "app", reachable, "it is not a service name previews can reach"],
    // Named in the list, but never dialled when it is not a plain name (a hostile project's service).
    ["evil.example", "app", [{ service: "evil.example", ports: [] }], "it is not a service name previews can reach"]
  ])("%s (app %s) → %s", (service, app, list, expected) => {
    assert.strictEqual(serviceRefusal(service, app, list), expected)
  })
})

describe("service preview addresses", () => {
  it.each<readonly [string, PreviewTarget]>([
    [`6379.db.${ID}.localhost:${PP}`, at(6379, "db")],
    [`6379.DB.${ID.toUpperCase()}.localhost:${PP}`, at(6379, "db")],
    [`3000.${ID}.localhost:${PP}`, at(3000)],
    [`80.my_web-2.${ID}.localhost:${PP}`, at(80, "my_web-2")],
    // Never a name previews cannot dial, nor five labels.
    [`6379.localhost.${ID}.localhost:${PP}`, foreign],
    [`6379.1db.${ID}.localhost:${PP}`, foreign],
    [`6379.db.x.${ID}.localhost:${PP}`, foreign],
    [`db.6379.${ID}.localhost:${PP}`, foreign],
    [`6379.db.${ID}.localhost:${PP + 1}`, foreign],
    [`6379..${ID}.localhost:${PP}`, foreign]
  ])("Host %s → %o", (header, expected) => {
    assert.deepStrictEqual(previewTarget(header, PP), expected)
  })

  it.each<readonly [string, { port: number; service?: string; rest: string } | undefined]>([
    [`/s/${ID}/db:6379/`, { port: 6379, service: "db", rest: "/" }],
    [`/s/${ID}/db:6379/x?y=1`, { port: 6379, service: "db", rest: "/x?y=1" }],
    [`/s/${ID}/3000/a:b`, { port: 3000, rest: "/a:b" }],
    [`/s/${ID}/DB:6379/`, undefined],
    [`/s/${ID}/host.docker.internal:80/`, undefined],
    [`/s/${ID}/172.17.0.1:80/`, undefined],
    [`/s/${ID}/[::1]:80/`, undefined],
    [`/s/${ID}/db:6379:1/`, undefined],
    [`/s/${ID}/db:/`, undefined],
    [`/s/${ID}/:6379/`, undefined],
    [`/s/${ID}/db%3a6379/`, undefined]
  ])("path %s → %o", (target, expected) => {
    assert.deepStrictEqual(parsePreviewPath(target), expected === undefined ? undefined : { sandboxId, ...expected })
  })

  it("URLs read back as what they were made from; the app's forms are unchanged", () => {
    const url = previewUrl(sandboxId, 6379, PP, "db")
    assert.strictEqual(url, `http://6379.db.${ID}.localhost:${PP}/`)
    assert.deepStrictEqual(previewTarget(new URL(url).host, PP), at(6379, "db"))
    const path = previewPathUrl(sandboxId, 6379, PP, "db")
    assert.strictEqual(path, `http://localhost:${PP}/s/${ID}/db:6379/`)
    assert.deepStrictEqual(parsePreviewPath(new URL(path).pathname), {
      sandboxId,
      port: 6379,
      service: "db",
      rest: "/"
    })
    assert.strictEqual(previewUrl(sandboxId, 3000, PP), `http://3000.${ID}.localhost:${PP}/`)
    assert.strictEqual(previewPathUrl(sandboxId, 3000, PP), `http://localhost:${PP}/s/${ID}/3000/`)
  })

  it("a service's page and the app's are one sandbox's origin; another sandbox's is not", () => {
    assert.isTrue(originAllowed(`http://3000.${ID}.localhost:${PP}`, at(6379, "db"), PP))
    assert.isTrue(originAllowed(`http://80.web.${ID}.localhost:${PP}`, at(3000), PP))
    assert.isFalse(originAllowed(`http://80.web.${OTHER}.localhost:${PP}`, at(3000), PP))
  })
})

describe("declared service ports", () => {
  it.each<readonly [number | string, { service: string; port: number } | undefined]>([
    ["db:5432", { service: "db", port: 5432 }],
    [5432, undefined],
    ["5432", undefined],
    ["localhost:5432", undefined],
    ["db:05432", undefined],
    ["db:65536", undefined],
    ["db.example:5432", undefined],
    ["Db:5432", undefined]
  ])("forwardPorts %j → %o", (entry, expected) => {
    assert.deepStrictEqual(forwardedServicePort(entry), expected)
  })

  it("forwardPorts' entries of reachable services first, then each service's own; each once", () => {
    const declared = declaredServicePorts(
      [
        { service: "db", ports: [5432] },
        { service: "web", ports: [80, 443] }
      ],
      {
        forwardPorts: [3000, "web:443", "queue:5672", "db:5432", "web:443"],
        portsAttributes: { "web:443": { label: "Secure", onAutoForward: "notify" }, "443": { label: "app's" } }
      }
    )
    assert.deepStrictEqual(
      declared.map((entry) => [entry.service, entry.port, entry.source, entry.label, entry.onAutoForward]),
      [
        ["web", 443, "devcontainer", "Secure", "notify"],
        ["db", 5432, "devcontainer", null, null],
        ["web", 80, "compose", null, null]
      ]
    )
    const listed = servicePreviewPorts(declared, new Set(["web:443", "443"]), new Set(["db:5432"]))
    assert.deepStrictEqual(
      listed.map((entry) => [entry.service, entry.port, entry.listening, entry.public]),
      [
        ["web", 443, true, false],
        ["db", 5432, false, true],
        ["web", 80, false, false]
      ]
    )
  })
})

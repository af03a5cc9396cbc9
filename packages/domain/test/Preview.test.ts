import { assert, describe, it } from "@effect/vitest"
import {
  bearerToken,
  cookieValue,
  declaredPorts,
  listeningPorts,
  originAllowed,
  PREVIEW_COOKIE,
  type PreviewTarget,
  parsePreviewPath,
  previewPathUrl,
  previewPorts,
  previewTarget,
  previewUrl,
  previewUrlTemplate,
  SandboxId
} from "@prbox/domain"

const PP = 47100
const ID = "abc123def456"
const OTHER = "zzz999yyy888"
const sandboxId = SandboxId.make(ID)
const host = (port: number, id: string = ID): PreviewTarget => ({
  _tag: "HostForm",
  sandboxId: SandboxId.make(id),
  port
})
const pathForm: PreviewTarget = { _tag: "PathForm" }
const foreign: PreviewTarget = { _tag: "Foreign" }

describe("previewTarget", () => {
  it.each<readonly [string | undefined, PreviewTarget]>([
    [`3000.${ID}.localhost:${PP}`, host(3000)],
    [`3000.${ID.toUpperCase()}.LOCALHOST:${PP}`, host(3000)],
    [`1.${ID}.localhost:${PP}`, host(1)],
    [`65535.${ID}.localhost:${PP}`, host(65535)],
    [`localhost:${PP}`, pathForm],
    [`LocalHost:${PP}`, pathForm],
    [`127.0.0.1:${PP}`, pathForm],
    // The preview port must be there and be ours.
    [`localhost`, foreign],
    [`localhost:${PP + 1}`, foreign],
    [`localhost:0${PP}`, foreign],
    [`localhost:`, foreign],
    [`3000.${ID}.localhost`, foreign],
    [`3000.${ID}.localhost:8080`, foreign],
    // Loopback by another name is not ours: the server listens on 127.0.0.1 only.
    [`[::1]:${PP}`, foreign],
    [`127.0.0.2:${PP}`, foreign],
    [`localhost.:${PP}`, foreign],
    // The app port: canonical decimal in 1..65535.
    [`0.${ID}.localhost:${PP}`, foreign],
    [`65536.${ID}.localhost:${PP}`, foreign],
    [`03000.${ID}.localhost:${PP}`, foreign],
    [`30a0.${ID}.localhost:${PP}`, foreign],
    [`-3000.${ID}.localhost:${PP}`, foreign],
    [`.${ID}.localhost:${PP}`, foreign],
    // The id: exactly 12 of [a-z0-9].
    [`3000.abc123def45.localhost:${PP}`, foreign],
    [`3000.abc123def4567.localhost:${PP}`, foreign],
    [`3000.abc123def45_.localhost:${PP}`, foreign],
    [`3000.${ID}.localhost.evil.com:${PP}`, foreign],
    [`3000.${ID}.evil.com:${PP}`, foreign],
    [`x.3000.${ID}.localhost:${PP}`, foreign],
    [`${ID}.localhost:${PP}`, foreign],
    [`evil.com:${PP}`, foreign],
    ["", foreign],
    [undefined, foreign]
  ])("%s → %o", (header, expected) => {
    assert.deepStrictEqual(previewTarget(header, PP), expected)
  })
})

describe("parsePreviewPath", () => {
  it.each<readonly [string, { port: number; rest: string } | undefined]>([
    [`/s/${ID}/3000`, { port: 3000, rest: "/" }],
    [`/s/${ID}/3000/`, { port: 3000, rest: "/" }],
    [`/s/${ID}/3000/api/items`, { port: 3000, rest: "/api/items" }],
    [`/s/${ID}/3000/api?x=1&y=/s/${OTHER}/1`, { port: 3000, rest: `/api?x=1&y=/s/${OTHER}/1` }],
    [`/s/${ID}/3000?x=1`, { port: 3000, rest: "/?x=1" }],
    [`/s/${ID}/3000//a`, { port: 3000, rest: "//a" }],
    // What follows the port is the app's business; the id and port stay put.
    [`/s/${ID}/3000/../x`, { port: 3000, rest: "/../x" }],
    [`/s/${ID}/3000/%2e%2e/%2e%2e/s/${OTHER}/5000`, { port: 3000, rest: `/%2e%2e/%2e%2e/s/${OTHER}/5000` }],
    [`/s/${ID}/3000/..%2f..%2f`, { port: 3000, rest: "/..%2f..%2f" }],
    [`/s/${ID}/0/`, undefined],
    [`/s/${ID}/65536/`, undefined],
    [`/s/${ID}/03000/`, undefined],
    [`/s/${ID}/3000%2f../`, undefined],
    [`/s/${ID}/../3000/`, undefined],
    [`/s/${ID}/`, undefined],
    [`/s/${ID}`, undefined],
    [`/s/${ID.toUpperCase()}/3000/`, undefined],
    [`/s/abc123def45/3000/`, undefined],
    [`/s/abc123def4567/3000/`, undefined],
    [`//s/${ID}/3000/`, undefined],
    [`/x/${ID}/3000/`, undefined],
    [`http://localhost:${PP}/s/${ID}/3000/`, undefined],
    ["/", undefined],
    ["", undefined]
  ])("%s → %o", (target, expected) => {
    assert.deepStrictEqual(parsePreviewPath(target), expected === undefined ? undefined : { sandboxId, ...expected })
  })
})

describe("originAllowed", () => {
  it.each<readonly [string | undefined, PreviewTarget, boolean]>([
    [undefined, host(3000), true],
    [undefined, pathForm, true],
    [`http://3000.${ID}.localhost:${PP}`, host(3000), true],
    // Every port of one sandbox is one trust domain (the cookie is on <id>.localhost).
    [`http://5173.${ID}.localhost:${PP}`, host(3000), true],
    [`HTTP://5173.${ID.toUpperCase()}.LOCALHOST:${PP}`, host(3000), true],
    [`http://3000.${OTHER}.localhost:${PP}`, host(3000), false],
    [`http://localhost:${PP}`, host(3000), false],
    [`http://3000.${ID}.localhost:${PP + 1}`, host(3000), false],
    [`http://3000.${ID}.localhost`, host(3000), false],
    [`http://3000.${ID}.localhost:${PP}/`, host(3000), false],
    // We serve plain http: an https origin on our host is not one of our pages.
    [`https://3000.${ID}.localhost:${PP}`, host(3000), false],
    [`hxxp://3000.${ID}.localhost:${PP}`, host(3000), false],
    ["http://evil.com", host(3000), false],
    [`http://evil.com:${PP}`, host(3000), false],
    ["null", host(3000), false],
    ["", host(3000), false],
    [`http://localhost:${PP}`, pathForm, true],
    [`http://127.0.0.1:${PP}`, pathForm, true],
    [`http://3000.${ID}.localhost:${PP}`, pathForm, false],
    [`https://localhost:${PP}`, pathForm, false],
    [`http://localhost:${PP + 1}`, pathForm, false],
    ["http://evil.com", pathForm, false],
    ["null", pathForm, false],
    [undefined, foreign, true],
    [`http://localhost:${PP}`, foreign, false]
  ])("%s to %o → %s", (origin, target, expected) => {
    assert.strictEqual(originAllowed(origin, target, PP), expected)
  })
})

describe("preview URLs", () => {
  it("host form, path form and the container's template", () => {
    assert.strictEqual(previewUrl(sandboxId, 3000, PP), `http://3000.${ID}.localhost:${PP}/`)
    assert.strictEqual(previewPathUrl(sandboxId, 3000, PP), `http://localhost:${PP}/s/${ID}/3000/`)
    assert.strictEqual(previewUrlTemplate(sandboxId, PP), `http://{{port}}.${ID}.localhost:${PP}/`)
  })

  it("each URL reads back as what it was made from", () => {
    const url = new URL(previewUrl(sandboxId, 3000, PP))
    assert.deepStrictEqual(previewTarget(url.host, PP), host(3000))
    const path = new URL(previewPathUrl(sandboxId, 3000, PP))
    assert.deepStrictEqual(previewTarget(path.host, PP), pathForm)
    assert.deepStrictEqual(parsePreviewPath(path.pathname), { sandboxId, port: 3000, rest: "/" })
    const templated = previewUrlTemplate(sandboxId, PP).replace("{{port}}", "8081")
    assert.deepStrictEqual(previewTarget(new URL(templated).host, PP), host(8081))
  })
})

describe("cookieValue", () => {
  it.each<readonly [string | undefined, string | undefined]>([
    [`${PREVIEW_COOKIE}=tok`, "tok"],
    [`a=1; ${PREVIEW_COOKIE}=tok; b=2`, "tok"],
    [`a=1;${PREVIEW_COOKIE}=tok`, "tok"],
    [`  ${PREVIEW_COOKIE} =  tok  ;b=2`, "tok"],
    [`${PREVIEW_COOKIE}="tok"`, "tok"],
    [`${PREVIEW_COOKIE}="`, '"'],
    [`${PREVIEW_COOKIE}=a=b`, "a=b"],
    [`${PREVIEW_COOKIE}=`, ""],
    [`${PREVIEW_COOKIE}=first; ${PREVIEW_COOKIE}=second`, "first"],
    [`x-${PREVIEW_COOKIE}=tok`, undefined],
    [`${PREVIEW_COOKIE}-x=tok`, undefined],
    [`PRBOX-PREVIEW=tok`, undefined],
    [PREVIEW_COOKIE, undefined],
    ["a=1; b=2", undefined],
    ["", undefined],
    [undefined, undefined]
  ])("%s → %s", (header, expected) => {
    assert.strictEqual(cookieValue(header, PREVIEW_COOKIE), expected)
  })
})

describe("bearerToken", () => {
  it.each<readonly [string | undefined, string | undefined]>([
    ["Bearer abc123", "abc123"],
    ["bearer abc123", "abc123"],
    ["BEARER abc123", "abc123"],
    ["Bearer   abc123  ", "abc123"],
    ["Bearer", undefined],
    ["Bearer ", undefined],
    ["Bearer a b", undefined],
    ["Bearerabc123", undefined],
    ["Basic dXNlcjpwYXNz", undefined],
    [" Bearer abc123", undefined],
    ["", undefined],
    [undefined, undefined]
  ])("%s → %s", (header, expected) => {
    assert.strictEqual(bearerToken(header), expected)
  })
})

// Lines as the kernel writes them (trailing spaces included).
const TCP4 = [
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     ",
  "   0: 00000000:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 182 1 000000003b4283c8 100 0 0 10 0                       ",
  "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 183 1 000000003b4283c9 100 0 0 10 0                       ",
  "   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 184 1 000000003b4283ca 20 4 30 10 -1                      ",
  "   3: 0200A8C0:D431 0300A8C0:01BB 01 00000000:00000000 02:000AE3C2 00000000  1000        0 185 2 000000003b4283cb 20 4 30 10 -1                      ",
  "   4: 0100007F:0BB8 0100007F:B0A2 06 00000000:00000000 03:00001770 00000000     0        0 0 3 000000003b4283cc                                      "
].join("\n")
const TCP6 = [
  "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
  "   0: 00000000000000000000000000000000:1435 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 190 1 00000000a1b2c3d4 100 0 0 10 0",
  "   1: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 191 1 00000000a1b2c3d5 100 0 0 10 0",
  "   2: 00000000000000000000000001000000:1435 00000000000000000000000001000000:E2A0 01 00000000:00000000 00:00000000 00000000  1000        0 192 1 00000000a1b2c3d6 20 4 30 10 -1"
].join("\n")

const HEADER = TCP4.split("\n")[0] ?? ""

describe("listeningPorts", () => {
  it.each<readonly [string, string, ReadonlyArray<number> | undefined]>([
    ["v4 LISTEN rows only, not ESTABLISHED or TIME_WAIT", TCP4, [3000, 8080]],
    ["v6 LISTEN rows only", TCP6, [3000, 5173]],
    ["v4 then v6, each port once, ascending", `${TCP4}\n${TCP6}\n`, [3000, 5173, 8080]],
    [
      "lowercase state and hex",
      `${HEADER}\n   0: 0100007f:1f90 00000000:0000 0a 00000000:00000000 00:00000000 00000000 0 0 1 1`,
      [8080]
    ],
    ["headers only", TCP4.split("\n")[0] ?? "", []],
    ["port 0 is not a port", `${HEADER}\n   0: 00000000:0000 00000000:0000 0A 00000000:00000000`, []],
    // Not a /proc/net/tcp answer: unreadable, never "nothing listens".
    ["nothing", "", undefined],
    ["blank lines", "\n\n  \n", undefined],
    ["a row cut short", `${HEADER}\n   0: 00000000:0BB8 00000000:0000`, undefined],
    ["text that is not a table", `${HEADER}\nHTTP/1.1 200 OK`, undefined]
  ])("%s", (_name, text, expected) => {
    assert.deepStrictEqual(listeningPorts(text), expected)
  })
})

describe("declaredPorts", () => {
  it("forwardPorts in order, labels and onAutoForward from portsAttributes, other hosts skipped", () => {
    assert.deepStrictEqual(
      declaredPorts(
        {
          forwardPorts: [3000, "5173", "localhost:8000", "LOCALHOST:8001", "db:5432", "127.0.0.1:9000", 0, 65536, 3.5],
          portsAttributes: {
            "3000": { label: "web", onAutoForward: "openBrowser" },
            "5173": { label: 42, onAutoForward: "notify" },
            "5432": { label: "db" },
            "3000-4000": { label: "range" }
          }
        },
        []
      ),
      [
        { port: 3000, label: "web", source: "devcontainer", onAutoForward: "openBrowser" },
        { port: 5173, label: null, source: "devcontainer", onAutoForward: "notify" },
        { port: 8000, label: null, source: "devcontainer", onAutoForward: null },
        { port: 8001, label: null, source: "devcontainer", onAutoForward: null }
      ]
    )
  })

  it.each<readonly [string, ReadonlyArray<number | string>]>([
    ["zero", ["0"]],
    ["too large", ["65536", "localhost:65536"]],
    ["leading zeros", ["03000", "localhost:03000"]],
    ["not digits", ["3e3", "web", "localhost:", "localhost:http", ""]]
  ])("forwardPorts entries that are not a port are skipped: %s", (_name, forwardPorts) => {
    assert.deepStrictEqual(declaredPorts({ forwardPorts, portsAttributes: {} }, []), [])
  })

  it("config.json's ports come after devcontainer.json's; a port named twice keeps its first entry", () => {
    assert.deepStrictEqual(
      declaredPorts({ forwardPorts: [3000, "3000", 5000], portsAttributes: { "3000": { label: "web" } } }, [
        { port: 3000, label: "from config", onAutoForward: "silent" },
        { port: 9229, label: "debugger" },
        { port: 6006, onAutoForward: "openBrowser" },
        { port: 9229, label: "again" }
      ]),
      [
        { port: 3000, label: "web", source: "devcontainer", onAutoForward: null },
        { port: 5000, label: null, source: "devcontainer", onAutoForward: null },
        { port: 9229, label: "debugger", source: "config", onAutoForward: null },
        { port: 6006, label: null, source: "config", onAutoForward: "openBrowser" }
      ]
    )
  })
})

describe("previewPorts", () => {
  const declared = declaredPorts({ forwardPorts: [5000, 3000], portsAttributes: { "3000": { label: "web" } } }, [
    { port: 9229, label: "debugger" }
  ])

  it("declared ones in order whether listening or not, then the other listening ones ascending", () => {
    assert.deepStrictEqual(
      previewPorts({ declared, listening: [9000, 3000, 4000, 3000], public: [4000, 5000], hidden: [8080, 47919] }),
      [
        { port: 5000, label: null, source: "devcontainer", onAutoForward: null, listening: false, public: true },
        { port: 3000, label: "web", source: "devcontainer", onAutoForward: null, listening: true, public: false },
        { port: 9229, label: "debugger", source: "config", onAutoForward: null, listening: false, public: false },
        { port: 4000, label: null, source: "discovered", onAutoForward: null, listening: true, public: true },
        { port: 9000, label: null, source: "discovered", onAutoForward: null, listening: true, public: false }
      ]
    )
  })

  it("prbox's own ports are never discovered, but stay when declared", () => {
    const ports = previewPorts({
      declared: declaredPorts({ forwardPorts: [8080], portsAttributes: {} }, []),
      listening: [8080, 47919, 3000],
      public: [],
      hidden: [8080, 47919]
    })
    assert.deepStrictEqual(
      ports.map((entry) => [entry.port, entry.source, entry.listening]),
      [
        [8080, "devcontainer", true],
        [3000, "discovered", true]
      ]
    )
  })

  it("nothing declared, nothing listening: an empty list", () => {
    assert.deepStrictEqual(previewPorts({ declared: [], listening: [], public: [3000], hidden: [] }), [])
  })
})

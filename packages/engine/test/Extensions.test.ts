import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { NodeDocker } from "@prbox/docker"
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { inject } from "vitest"
import { codeServerImage } from "../../../scripts/images/code-server.ts"
import { imageExists, imageTag } from "../../../scripts/images/images.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { ContainerRuntime, failureReason, isExtensionId, makeInstallExtensions } from "../src/index.ts"
import { NodeContainerRuntime } from "../src/node/index.ts"
import { type GalleryExtension, serveGallery } from "./gallery.ts"
import { bounded } from "./harness.ts"

const image = imageTag(codeServerImage)
const VSCODE_APP = join(import.meta.dirname, "..", "..", "..", "apps", "vscode")
const manifest: GalleryExtension["manifest"] = JSON.parse(readFileSync(join(VSCODE_APP, "package.json"), "utf8"))
const PRBOX_ID = `${manifest.publisher}.${manifest.name}`

/** Where code-server's HOME is in these tests: not the image's, so only the passed env can put extensions there. */
const HOME = "/tmp/sandbox-home"
const ENV = {
  HOME,
  XDG_CONFIG_HOME: `${HOME}/.config`,
  XDG_DATA_HOME: `${HOME}/.local/share`,
  XDG_CACHE_HOME: `${HOME}/.cache`
}
const USER = "1000:1000"

/** prbox's own extension, bundled and packaged by the app's script (run, not imported: packages never import apps). */
const packageVsix = (): string =>
  execFileSync(process.execPath, [join(VSCODE_APP, "scripts", "package.ts")], { encoding: "utf8" }).trim()

/**
 * The Docker bridge's gateway: the host address the containers reach. Docker
 * does not always record it in the network's IPAM config (a first start of
 * Docker 20.10 records the subnet alone); it is then the subnet's first
 * address, as Docker's IPAM gives it to the bridge.
 */
const bridgeGateway = (): string => {
  const [gateway = "", subnet = ""] = execFileSync(
    "docker",
    ["network", "inspect", "bridge", "--format", "{{range .IPAM.Config}}{{.Gateway}}|{{.Subnet}}{{end}}"],
    { encoding: "utf8" }
  )
    .trim()
    .split("|")
  if (gateway !== "") return gateway
  const network = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/\d+$/.exec(subnet)
  if (network === null) throw new Error(`Docker's bridge has neither a gateway nor an IPv4 subnet ("${subnet}")`)
  return `${network[1]}.${network[2]}.${network[3]}.${Number(network[4]) + 1}`
}

/** The real runtime, with every exec's argv recorded. */
const runtimeLayer = (execs: Array<ReadonlyArray<string>>) =>
  Layer.effect(
    ContainerRuntime,
    Effect.map(ContainerRuntime, (real) =>
      ContainerRuntime.of({
        ...real,
        exec: (containerId, argv, options) =>
          Effect.suspend(() => {
            execs.push(argv)
            return real.exec(containerId, argv, options)
          })
      })
    )
  ).pipe(
    Layer.provide(NodeContainerRuntime.layer),
    Layer.provide(NodeDocker.layer()),
    Layer.provide(FetchHttpClient.layer)
  )

/** The code-server test image running code-server without auth, `EXTENSIONS_GALLERY` in its env as config.json's `env` puts it. */
const codeServerContainer = (gallerySetting: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const containerId = yield* runtime.provision({
        name: `prbox-test-extensions-${randomBytes(4).toString("hex")}`,
        image,
        args: ["--bind-addr", "127.0.0.1:8080", "--auth", "none", "--disable-telemetry", "/workspace"],
        env: { EXTENSIONS_GALLERY: gallerySetting },
        labels: { [TEST_RUN_LABEL]: inject("testRunId") },
        binds: [],
        user: USER,
        workingDir: "/workspace",
        port: 8080,
        capDrop: []
      })
      yield* runtime.start(containerId)
      return containerId
    }),
    (containerId) => Effect.flatMap(ContainerRuntime, (runtime) => runtime.destroy(containerId)).pipe(Effect.orDie)
  )

describe("extensions of a devcontainer", () => {
  it.live(
    "install from the gallery one by one: an unknown id fails alone, an invalid one never runs",
    () => {
      const execs: Array<ReadonlyArray<string>> = []
      return Effect.gen(function* () {
        assert.isTrue(imageExists(image), `${image} is missing: run scripts/setup --with-test-images`)
        const gallery = yield* serveGallery(bridgeGateway(), { manifest, vsixPath: packageVsix() })
        const containerId = yield* codeServerContainer(gallery.setting)
        const runtime = yield* ContainerRuntime
        const install = yield* makeInstallExtensions
        const lines: Array<string> = []

        const outcomes = yield* install({
          containerId,
          codeServer: ["code-server"],
          user: USER,
          cwd: "/workspace",
          env: ENV,
          ids: ["prbox.does-not-exist", "$(touch /tmp/pwned)", "--help", PRBOX_ID],
          progress: (line) => Effect.sync(() => lines.push(line))
        }).pipe(bounded("the installs did not finish", 300))

        assert.deepStrictEqual(
          outcomes.map(({ id, ok }) => ({ id, ok })),
          [
            { id: "prbox.does-not-exist", ok: false },
            { id: "$(touch /tmp/pwned)", ok: false },
            { id: "--help", ok: false },
            { id: PRBOX_ID, ok: true }
          ]
        )
        const [missing, injected] = outcomes
        assert.strictEqual(missing?.detail, "Extension 'prbox.does-not-exist' not found.")
        assert.strictEqual(injected?.detail, "not an extension id (publisher.name)")
        assert.deepStrictEqual(lines, [
          "extension prbox.does-not-exist could not be installed: Extension 'prbox.does-not-exist' not found.",
          'extension "$(touch /tmp/pwned)" could not be installed: not an extension id (publisher.name)',
          'extension "--help" could not be installed: not an extension id (publisher.name)',
          `extension ${PRBOX_ID} installed`
        ])
        // The invalid ids never reached the container: one exec for each valid id.
        assert.deepStrictEqual(execs, [
          ["code-server", "--install-extension", "prbox.does-not-exist"],
          ["code-server", "--install-extension", PRBOX_ID]
        ])
        // The .vsix came from the gallery.
        assert.include(
          gallery.requests,
          `GET /assets/${manifest.publisher}/${manifest.name}/${manifest.version}/Microsoft.VisualStudio.Services.VSIXPackage`
        )

        // code-server with the sandbox's env (where the running one looks) lists it, asked through
        // the docker CLI so that the runtime's own env passing is under test; the container still runs.
        const listed = execFileSync(
          "docker",
          [
            "exec",
            "--user",
            USER,
            ...Object.entries(ENV).flatMap(([key, value]) => ["--env", `${key}=${value}`]),
            containerId,
            "code-server",
            "--list-extensions",
            "--show-versions"
          ],
          { encoding: "utf8" }
        )
        assert.include(listed.split("\n"), `${PRBOX_ID}@${manifest.version}`)
        assert.strictEqual((yield* runtime.state(containerId))._tag, "Running")
      }).pipe(Effect.scoped, Effect.provide(runtimeLayer(execs)))
    },
    360_000
  )
})

describe("extension ids and failure reasons", () => {
  it.each([
    ["ms-python.python", true],
    ["prbox.prbox-vscode", true],
    ["GitHub.copilot@1.2.3", true],
    ["dbaeumer.vscode-eslint@3.0.10-beta.1", true],
    ["python", false],
    ["-x.y", false],
    ["a.b.c", false],
    ["a.b@latest", false],
    ["a.b; rm -rf /", false],
    ["a.b\n", false],
    ["", false]
  ])("%j is an extension id: %s", (id, expected) => {
    assert.strictEqual(isExtensionId(id), expected)
  })

  it.each([
    [
      "Installing extensions...\nExtension 'x.y' not found.\nMake sure you use the full extension ID, including the publisher, e.g.: ms-dotnettools.csharp\nFailed Installing Extensions: x.y\n",
      "Extension 'x.y' not found."
    ],
    [
      "\u001b[31mError: EACCES: permission denied, mkdir '/x'\u001b[0m\n",
      "Error: EACCES: permission denied, mkdir '/x'"
    ],
    ["Installing extensions...\nFailed Installing Extensions: x.y\n", "Failed Installing Extensions: x.y"],
    ["", "no output"],
    [`error ${"z".repeat(500)}`, `error ${"z".repeat(193)}…`]
  ])("the reason of %j is %j", (output, reason) => {
    assert.strictEqual(failureReason(output), reason)
  })
})

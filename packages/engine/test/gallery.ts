import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

/**
 * A local VS Code extensions gallery serving one real .vsix: the part of the
 * marketplace's protocol code-server's `--install-extension` uses (none is
 * reachable here). Point code-server at it with `EXTENSIONS_GALLERY`.
 *
 * The shapes follow VS Code's gallery client (extensionGalleryService): the
 * CLI POSTs `<serviceUrl>/extensionquery` filtered by ExtensionName (7), reads
 * the engine range from the version's properties or its manifest asset, and
 * downloads `<fallbackAssetUri>/Microsoft.VisualStudio.Services.VSIXPackage`.
 */
export interface GalleryExtension {
  /** The extension's package.json (publisher, name, version, engines.vscode). */
  readonly manifest: {
    readonly publisher: string
    readonly name: string
    readonly version: string
    readonly engines: { readonly vscode: string }
  }
  readonly vsixPath: string
}

export interface Gallery {
  /** The value of code-server's `EXTENSIONS_GALLERY`. */
  readonly setting: string
  /** `METHOD path` of every request, in order. */
  readonly requests: ReadonlyArray<string>
}

const VSIX_ASSET = "Microsoft.VisualStudio.Services.VSIXPackage"
const MANIFEST_ASSET = "Microsoft.VisualStudio.Code.Manifest"
const EXTENSION_NAME_FILTER = 7

const rawExtension = (extension: GalleryExtension, base: string, ids: { extension: string; publisher: string }) => {
  const { publisher, name, version, engines } = extension.manifest
  const assetUri = `${base}/assets/${publisher}/${name}/${version}`
  const date = new Date(0).toISOString()
  return {
    extensionId: ids.extension,
    extensionName: name,
    displayName: name,
    shortDescription: "",
    flags: "validated, public",
    publisher: { publisherId: ids.publisher, publisherName: publisher, displayName: publisher },
    releaseDate: date,
    publishedDate: date,
    lastUpdated: date,
    categories: [],
    tags: [],
    statistics: [],
    versions: [
      {
        version,
        flags: "validated",
        lastUpdated: date,
        assetUri,
        fallbackAssetUri: assetUri,
        files: [
          { assetType: VSIX_ASSET, source: `${assetUri}/${VSIX_ASSET}` },
          { assetType: MANIFEST_ASSET, source: `${assetUri}/${MANIFEST_ASSET}` }
        ],
        properties: [{ key: "Microsoft.VisualStudio.Code.Engine", value: engines.vscode }]
      }
    ]
  }
}

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/** The ExtensionName values of an extensionquery body (lowercase `publisher.name`). */
const queriedNames = (body: string): Array<string> => {
  const parsed: { filters?: Array<{ criteria?: Array<{ filterType: number; value?: string }> }> } = JSON.parse(body)
  return (parsed.filters ?? [])
    .flatMap((filter) => filter.criteria ?? [])
    .filter((criterion) => criterion.filterType === EXTENSION_NAME_FILTER)
    .map((criterion) => (criterion.value ?? "").toLowerCase())
}

/** Serves `extension` on `host` (a random port) for the scope's life. */
export const serveGallery = (host: string, extension: GalleryExtension) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly gallery: Gallery; readonly close: () => Promise<void> }, Error>((resume) => {
      const { publisher, name, version } = extension.manifest
      const id = `${publisher}.${name}`.toLowerCase()
      const vsix = readFileSync(extension.vsixPath)
      const ids = { extension: randomUUID(), publisher: randomUUID() }
      const requests: Array<string> = []
      let base = ""

      const json = (response: ServerResponse, status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
      }
      const handle = async (request: IncomingMessage, response: ServerResponse) => {
        const path = new URL(request.url ?? "/", "http://gallery").pathname
        requests.push(`${request.method} ${path}`)
        const raw = rawExtension(extension, base, ids)
        if (request.method === "POST" && path === "/extensionquery") {
          const found = queriedNames(await readBody(request)).includes(id) ? [raw] : []
          return json(response, 200, {
            results: [
              {
                extensions: found,
                resultMetadata: [
                  { metadataType: "ResultCount", metadataItems: [{ name: "TotalCount", count: found.length }] }
                ]
              }
            ]
          })
        }
        const assets = `/assets/${publisher}/${name}/${version}/`
        if (request.method === "GET" && path === `${assets}${VSIX_ASSET}`) {
          response.writeHead(200, { "content-type": "application/octet-stream" }).end(vsix)
          return
        }
        if (request.method === "GET" && path === `${assets}${MANIFEST_ASSET}`)
          return json(response, 200, extension.manifest)
        json(response, 404, { message: "not found" })
      }

      const server = createServer((request, response) => {
        handle(request, response).catch(() => response.writeHead(500).end())
      })
      server.on("error", (error) => resume(Effect.fail(error)))
      server.listen(0, host, () => {
        const { port } = server.address() as AddressInfo
        base = `http://${host}:${port}`
        const setting = JSON.stringify({
          serviceUrl: base,
          itemUrl: `${base}/item`,
          resourceUrlTemplate: `${base}/resource/{publisher}/{name}/{version}/{path}`
        })
        resume(
          Effect.succeed({
            gallery: { setting, requests },
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections()
                server.close(() => done())
              })
          })
        )
      })
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ gallery }) => gallery))

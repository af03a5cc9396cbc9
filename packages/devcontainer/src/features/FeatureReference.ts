import { folderOf, resolveInRepository } from "../Paths.ts"

// A feature's key in devcontainer.json, as the features distribution spec
// names the three sources. PR content: a local feature must be a folder of
// `.devcontainer/`, and plain HTTP is for loopback only (as the
// devcontainers CLI allows it for a registry on localhost).

/** A feature's source, decided from its key alone. */
export type FeatureReference =
  | {
      readonly _tag: "Oci"
      /** The key as written. */
      readonly key: string
      readonly registry: string
      /** `registry/namespace/id`: the feature without its version. */
      readonly resource: string
      readonly id: string
      readonly tag: string
      readonly digest: string | undefined
    }
  | { readonly _tag: "Tarball"; readonly key: string; readonly url: string; readonly id: string }
  | {
      readonly _tag: "Local"
      readonly key: string
      /** Repo-relative folder, inside `.devcontainer/`. */
      readonly folder: string
      readonly id: string
    }

const component = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/
const registryHost = /^(?:[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*|\[[0-9a-fA-F:]+\])(?::\d{1,5})?$/
const tagPattern = /^[\w][\w.-]{0,127}$/
const digestPattern = /^sha256:[a-f0-9]{64}$/

// Whether a URL's host is this machine's loopback, where plain HTTP is allowed. (@prbox/registry's
// isLoopback is the same rule; this package is pure and may not import it.)
const isLoopback = (host: string): boolean => /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i.test(host)

/** Why a key is not a feature reference prbox can fetch, or the reference. */
export type ParsedReference =
  | { readonly ok: true; readonly reference: FeatureReference }
  | { readonly ok: false; readonly detail: string }

const refused = (detail: string): ParsedReference => ({ ok: false, detail })

const ociReference = (key: string): ParsedReference => {
  const [withoutDigest = "", digest, ...more] = key.split("@")
  if (more.length > 0 || (digest !== undefined && !digestPattern.test(digest))) {
    return refused("expected a digest of the form sha256:<64 hex digits>")
  }
  const lastSlash = withoutDigest.lastIndexOf("/")
  const colon = withoutDigest.lastIndexOf(":")
  const hasTag = colon > lastSlash
  const resource = hasTag ? withoutDigest.slice(0, colon) : withoutDigest
  const tag = hasTag ? withoutDigest.slice(colon + 1) : "latest"
  // Lowercased as the devcontainers CLI reads a feature's path (an author's capitals name the same feature).
  const [registry = "", ...path] = resource.split("/").map((part, index) => (index === 0 ? part : part.toLowerCase()))
  const looksLikeRegistry = registry.includes(".") || registry.includes(":") || registry === "localhost"
  if (path.length < 1 || !looksLikeRegistry) {
    return refused(
      "a feature is an OCI reference (<registry>/<namespace>/<feature>:<version>), an https://…tgz URL or ./<folder>; short and GitHub-release ids are not supported"
    )
  }
  if (!registryHost.test(registry)) return refused("the registry is not a host name")
  if (!path.every((segment) => component.test(segment))) {
    return refused("the feature's path must be lowercase letters, digits and separators")
  }
  if (!tagPattern.test(tag)) return refused("the version tag is not valid")
  const id = path.at(-1) ?? ""
  return {
    ok: true,
    reference: { _tag: "Oci", key, registry, resource: [registry, ...path].join("/"), id, tag, digest }
  }
}

const tarballReference = (key: string): ParsedReference => {
  let url: URL
  try {
    url = new URL(key)
  } catch {
    return refused("not a valid URL")
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.host))) {
    return refused("a feature tarball must be fetched over https")
  }
  if (url.username !== "" || url.password !== "") return refused("a feature URL must not carry credentials")
  // devcontainer-feature-<id>.tgz, as features are published; else the file's name.
  const file = url.pathname.split("/").at(-1) ?? ""
  const id = /^devcontainer-feature-(.+)\.tgz$/.exec(file)?.[1] ?? file.replace(/\.(tgz|tar\.gz)$/, "")
  if (id === "") return refused("the URL names no file")
  return { ok: true, reference: { _tag: "Tarball", key, url: url.href, id } }
}

const localReference = (key: string, configFile: string): ParsedReference => {
  const folder = resolveInRepository(folderOf(configFile), key)
  if (folder === undefined || !folder.startsWith(".devcontainer/")) {
    return refused("a local feature must be a folder inside .devcontainer/")
  }
  return { ok: true, reference: { _tag: "Local", key, folder, id: folder.split("/").at(-1) ?? folder } }
}

/** A `features` key of `configFile` as a reference, or why it is not one. */
export const parseFeatureReference = (key: string, configFile: string): ParsedReference => {
  if (key.startsWith("./") || key.startsWith("../")) return localReference(key, configFile)
  if (/^https?:\/\//i.test(key)) return tarballReference(key)
  return ociReference(key)
}

/** What a dependency or an override names: the feature without version (the resource, the URL, the folder). */
export const featureResource = (reference: FeatureReference): string =>
  reference._tag === "Oci" ? reference.resource : reference._tag === "Tarball" ? reference.url : reference.folder

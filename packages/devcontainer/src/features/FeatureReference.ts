import { isLoopback, type OciReference, parseOciReference } from "@prbox/domain"
import { Result } from "effect"
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
      /** The key as domain's one OCI grammar reads it: what the registry client fetches. */
      readonly oci: OciReference
      /** `registry/namespace/id`: the feature without its version. */
      readonly resource: string
      readonly id: string
    }
  | { readonly _tag: "Tarball"; readonly key: string; readonly url: string; readonly id: string }
  | {
      readonly _tag: "Local"
      readonly key: string
      /** Repo-relative folder, inside `.devcontainer/`. */
      readonly folder: string
      readonly id: string
    }

/** Why a key is not a feature reference prbox can fetch, or the reference. */
export type ParsedReference =
  | { readonly ok: true; readonly reference: FeatureReference }
  | { readonly ok: false; readonly detail: string }

const refused = (detail: string): ParsedReference => ({ ok: false, detail })

const ociReference = (key: string): ParsedReference => {
  const parsed = parseOciReference(key)
  if (Result.isFailure(parsed)) {
    return refused(
      parsed.failure.kind === "no-registry"
        ? "a feature is an OCI reference (<registry>/<namespace>/<feature>:<version>), an https://…tgz URL or ./<folder>; short and GitHub-release ids are not supported"
        : parsed.failure.detail
    )
  }
  const oci = parsed.success
  const resource = `${oci.registry}/${oci.repository}`
  return { ok: true, reference: { _tag: "Oci", key, oci, resource, id: oci.repository.split("/").at(-1) ?? "" } }
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

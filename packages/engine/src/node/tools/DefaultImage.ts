import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { defaultImageRefusal } from "@prbox/domain"
import { Effect, FileSystem } from "effect"
import type { ChildProcessSpawner } from "effect/process"
import { ContainerRuntime } from "../../ContainerRuntime.ts"
import { DefaultImageUnavailable } from "../../SandboxTools.ts"
import { debianMirror } from "./DebianMirror.ts"
import { cacheDirectory, commandOutput, runStep, type StepFailure } from "./HostSteps.ts"

/**
 * The image a sandbox runs when nothing names one: Debian built here by
 * debootstrap from the host's own Debian mirror, imported into Docker, so a
 * machine that reaches only the package mirrors still gets a sandbox.
 * code-server is not in it: it is mounted from the host's distribution.
 */
export const DEBIAN_SUITE = "bookworm"
/** On top of minbase: what a reviewer expects in a shell, and what code-server loads (libgssapi). */
export const DEFAULT_IMAGE_PACKAGES: ReadonlyArray<string> = [
  "ca-certificates",
  "git",
  "procps",
  "libgssapi-krb5-2",
  "curl",
  "less",
  "openssh-client"
]
/** What this host needs to run debootstrap. */
const HOST_PACKAGES: ReadonlyArray<string> = ["debootstrap", "debian-archive-keyring"]

/** The image's settings (`docker import --change`): a non-root uid works, HOME is world-writable (rootfs.sh). */
export const DEFAULT_IMAGE_CHANGES: ReadonlyArray<string> = [
  "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "ENV LANG=C.UTF-8",
  "ENV SHELL=/bin/bash",
  "ENV HOME=/home/coder",
  "WORKDIR /workspace",
  'CMD ["/bin/bash"]'
]

const ROOTFS_SCRIPT = new URL("./default-image/rootfs.sh", import.meta.url).pathname
const rootfsScript = readFileSync(ROOTFS_SCRIPT, "utf8")

const keyOf = (parts: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part).update("\0")
  return hash.digest("hex").slice(0, 16)
}

/** The default image's tag: named by everything that makes it, so a changed recipe is a new image. */
export const DEFAULT_IMAGE = `prbox/default:${DEBIAN_SUITE}-${keyOf([
  DEBIAN_SUITE,
  DEFAULT_IMAGE_PACKAGES.join(","),
  rootfsScript,
  ...DEFAULT_IMAGE_CHANGES
])}`

const unavailable = (detail: string) => new DefaultImageUnavailable({ detail })
const stepFailed = (failure: StepFailure) =>
  unavailable(`building the default image: ${failure.step} failed (${failure.detail})`)

const isInstalled = (pkg: string) =>
  commandOutput(`dpkg-query ${pkg}`, "dpkg-query", ["--status", pkg]).pipe(
    Effect.map((status) => /^Status: install ok installed$/m.test(status)),
    Effect.orElseSucceed(() => false)
  )

/** Installs debootstrap and the Debian keyring with apt-get when missing (the caller is root). */
const ensureHostPackages = Effect.fn("DefaultImage.ensureHostPackages")(function* (
  onProgress: (line: string) => Effect.Effect<void>
) {
  const missing: Array<string> = []
  for (const pkg of HOST_PACKAGES) if (!(yield* isInstalled(pkg))) missing.push(pkg)
  if (missing.length === 0) return
  const env = { DEBIAN_FRONTEND: "noninteractive" }
  const install = (step: string) =>
    runStep(step, "apt-get", ["install", "-y", "-q", "--no-install-recommends", ...missing], { env, onProgress })
  yield* onProgress(`installing ${missing.join(" ")} (apt-get)`)
  yield* install(`apt-get install ${missing.join(" ")}`).pipe(
    Effect.catch(() =>
      runStep("apt-get update", "apt-get", ["update", "-q"], { env, onProgress }).pipe(
        Effect.andThen(install(`apt-get install ${missing.join(" ")}`))
      )
    ),
    Effect.mapError((failure) =>
      unavailable(`${failure.step} failed (${failure.detail}); install ${missing.join(" ")} and retry`)
    )
  )
})

/**
 * The default image's Debian root filesystem as a tar archive, cached by
 * content under `$XDG_CACHE_HOME/prbox/default-image` (a rebuild is an import).
 * Refused, with what to do instead, when this is not root on Linux.
 */
export const ensureDefaultRootfs = Effect.fn("DefaultImage.ensureRootfs")(function* (
  onProgress: (line: string) => Effect.Effect<void>
): Effect.fn.Return<string, DefaultImageUnavailable, FileSystem.FileSystem | ChildProcessSpawner.ChildProcessSpawner> {
  const refusal = defaultImageRefusal(process.getuid?.(), process.platform)
  if (refusal !== undefined) return yield* unavailable(refusal)
  const fs = yield* FileSystem.FileSystem
  const cache = cacheDirectory("default-image")
  const mirror = yield* debianMirror(DEBIAN_SUITE).pipe(Effect.mapError(unavailable))
  const packages = DEFAULT_IMAGE_PACKAGES.join(",")
  const archive = `${cache}/rootfs-${keyOf([DEBIAN_SUITE, mirror, packages, rootfsScript])}.tar`
  if (yield* fs.exists(archive).pipe(Effect.orElseSucceed(() => false))) {
    yield* onProgress(`Debian ${DEBIAN_SUITE}: using ${archive}`)
    return archive
  }
  yield* ensureHostPackages(onProgress)
  yield* fs
    .makeDirectory(cache, { recursive: true })
    .pipe(Effect.mapError(() => unavailable(`could not create ${cache}`)))
  yield* onProgress(`Debian ${DEBIAN_SUITE} from ${mirror} (debootstrap, a few minutes)`)
  yield* runStep("debootstrap", "bash", [ROOTFS_SCRIPT, DEBIAN_SUITE, mirror, packages, archive], {
    onProgress
  }).pipe(Effect.mapError(stepFailed))
  // Archives of older recipes are never used again.
  const stale = (yield* fs.readDirectory(cache).pipe(Effect.orElseSucceed(() => []))).filter(
    (file) => file.startsWith("rootfs-") && file.endsWith(".tar") && `${cache}/${file}` !== archive
  )
  yield* Effect.forEach(stale, (file) => fs.remove(`${cache}/${file}`).pipe(Effect.ignore))
  return archive
})

/** Builds `DEFAULT_IMAGE` (debootstrap, then `docker import`) and returns its tag. */
export const buildDefaultImage = Effect.fn("DefaultImage.build")(function* (
  onProgress: (line: string) => Effect.Effect<void>
) {
  const runtime = yield* ContainerRuntime
  const archivePath = yield* ensureDefaultRootfs(onProgress)
  yield* onProgress(`importing ${DEFAULT_IMAGE}`)
  yield* runtime.importImage({ archivePath, tag: DEFAULT_IMAGE, changes: DEFAULT_IMAGE_CHANGES }, onProgress)
  return DEFAULT_IMAGE
})

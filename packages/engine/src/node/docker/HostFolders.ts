import { randomBytes } from "node:crypto"
import { rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, posix } from "node:path"
import type { Readable } from "node:stream"
import { type ContainerSpec, type DockerShape, FolderArchive } from "@prbox/docker"
import { Clock, Effect, Semaphore } from "effect"
import { RuntimeError } from "../../Errors.ts"

/**
 * An image with no files at all: its containers are never started, only
 * mounted by the engine. Its name's host is reserved to be invalid: a PR
 * naming it cannot have an image of that name pulled in its place.
 */
export const EMPTY_IMAGE = "prbox.invalid/empty:1"
/** Where the throwaway container mounts the folder whose entry it changes. */
const MOUNT = "/prbox-parent"
/** Where a copying helper mounts the stored files it reads and the folders it writes. */
const FROM = "/prbox-from"
const TO = "/prbox-to"
/**
 * A copying helper's only process: each `$i` of its arguments, its stored
 * files' content copied over its folder (owners and modes kept, links as
 * links); it exits 0 only once every copy is made.
 */
const COPY_SH = `for i in "$@"; do cp -a "${FROM}/$i/." "${TO}/$i/" || exit 1; done`
/** All a copying helper keeps of Docker's capabilities: what `cp -a` as root needs to read anything and keep owners and modes. */
const COPY_CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID"]
/** Two zero blocks: a tar archive with nothing in it. */
const EMPTY_TAR = Buffer.alloc(1024)

const failed = (operation: string) => (error: { readonly message: string }) =>
  new RuntimeError({ operation, detail: error.message })

/**
 * A sandbox's folders on this machine as the engine handles them, through
 * the archive API of a container of an empty image, created with the folder
 * mounted and never started, so no program runs. What only root may do,
 * for a daemon that is not: sealing extracts a root-owned 0700 folder entry
 * over the folder; clearing extracts a file over it, which the engine does
 * by deleting the folder's whole tree first (links not followed). Reading
 * sends a path of the folder as a tar stream: links in it resolve inside
 * that container (an empty root and the folder), never on this machine.
 */
export const hostFoldersFor = (docker: DockerShape, helper: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    const imported = Semaphore.makeUnsafe(1)

    const ensureEmptyImage = imported.withPermit(
      Effect.gen(function* () {
        if (yield* docker.imageExists(EMPTY_IMAGE).pipe(Effect.mapError(failed("image.inspect")))) return
        const archivePath = join(tmpdir(), `prbox-empty-${randomBytes(6).toString("hex")}.tar`)
        yield* Effect.tryPromise({
          try: () => writeFile(archivePath, EMPTY_TAR, { mode: 0o600 }),
          catch: (cause) => new RuntimeError({ operation: "image.import", detail: String(cause) })
        })
        yield* docker
          .importImage({ archivePath, tag: EMPTY_IMAGE, changes: ['CMD ["none"]'] }, () => undefined)
          .pipe(
            Effect.mapError(failed("image.import")),
            Effect.ensuring(Effect.ignore(Effect.tryPromise(() => rm(archivePath, { force: true }))))
          )
      })
    )

    /**
     * A throwaway container of `spec` (removed with the scope). One left
     * behind (a killed daemon) is named prbox-folder-* and carries `helper`
     * (HelperLabels.ts): the next start of its home removes it.
     */
    const throwaway = (
      spec: Omit<ContainerSpec, "name" | "env" | "labels" | "exposedPort">,
      labels: Readonly<Record<string, string>>,
      operation: string
    ) =>
      Effect.acquireRelease(
        docker
          .createContainer({
            ...spec,
            name: `prbox-folder-${randomBytes(6).toString("hex")}`,
            env: {},
            labels: { ...labels, ...helper },
            exposedPort: 9
          })
          .pipe(Effect.mapError(failed(operation))),
        (helper) =>
          docker
            .remove(helper.id, { force: true, volumes: false })
            .pipe(Effect.catch((error) => Effect.logWarning(`could not remove ${helper.id}: ${error.message}`)))
      )

    /** A never-started container of the empty image that mounts `folder` at MOUNT, or a volume at `/<name>`. */
    const mounting = (
      folder: string,
      readOnly: boolean,
      labels: Readonly<Record<string, string>>,
      operation: string,
      volume?: { readonly name: string; readonly at: string }
    ) =>
      Effect.andThen(
        ensureEmptyImage.pipe(Effect.mapError(failed(operation))),
        throwaway(
          {
            image: EMPTY_IMAGE,
            cmd: ["none"],
            binds: volume === undefined ? [{ hostPath: folder, containerPath: MOUNT, readOnly }] : [],
            ...(volume === undefined
              ? {}
              : { volumes: [{ volume: volume.name, containerPath: posix.join("/", volume.at), readOnly: true }] })
          },
          labels,
          operation
        )
      )

    /** Extracts `archive` into `parent` (a host folder) as the engine. */
    const extractInto = (
      parent: string,
      archive: () => Readable,
      labels: Readonly<Record<string, string>>,
      operation: string
    ) =>
      Effect.scoped(
        Effect.gen(function* () {
          const helper = yield* mounting(parent, false, labels, operation)
          yield* docker.putArchive(helper.id, MOUNT, archive()).pipe(Effect.mapError(failed(operation)))
        })
      )

    return {
      /** Makes `parent/name` root's, mode 0700 (its content kept). */
      seal: (parent: string, name: string, labels: Readonly<Record<string, string>>) =>
        extractInto(parent, () => FolderArchive.packFolder(name, 0o700), labels, "folder.seal"),
      /** Deletes `parent/name`'s tree, leaving an empty file of that name that `parent`'s owner can remove. */
      clear: (parent: string, name: string, labels: Readonly<Record<string, string>>) =>
        extractInto(parent, () => FolderArchive.packFile(name, ""), labels, "folder.remove"),
      /**
       * `parent/name` filled with what volume `volume` holds, as data: the
       * volume is read by one never-started container (mounted at `/<name>`,
       * so its tar is named as the folder) and extracted by another into
       * `parent`; owners, modes and links kept as they are, none followed here.
       */
      fill: (volume: string, parent: string, name: string, labels: Readonly<Record<string, string>>) =>
        Effect.scoped(
          Effect.gen(function* () {
            const source = yield* mounting(parent, true, labels, "folder.fill", { name: volume, at: name })
            const archive = yield* docker
              .getArchive(source.id, posix.join("/", name))
              .pipe(Effect.mapError(failed("folder.fill")))
            if (archive === undefined) {
              return yield* new RuntimeError({ operation: "folder.fill", detail: `volume ${volume} cannot be read` })
            }
            const target = yield* mounting(parent, false, labels, "folder.fill")
            yield* docker.putArchive(target.id, MOUNT, archive).pipe(Effect.mapError(failed("folder.fill")))
          })
        ),
      /**
       * Folders of this machine filled with what the stored files hold, by
       * one started container of `image` (`cp -a` as its root): the stored
       * files mounted read-only, the folders read-write, nothing else. For a
       * sandbox whose own container (of the same image, on the same folders)
       * may run meanwhile: links resolve inside the helper, never here.
       */
      copy: (
        image: string,
        fills: ReadonlyArray<{ readonly volume: string; readonly folder: string }>,
        labels: Readonly<Record<string, string>>
      ) =>
        Effect.scoped(
          Effect.gen(function* () {
            const named = fills.map((fill, i) => ({ ...fill, name: String(i) }))
            const helper = yield* throwaway(
              {
                image,
                entrypoint: ["/bin/sh", "-c", COPY_SH, "prbox-copy", ...named.map(({ name }) => name)],
                binds: named.map(({ folder, name }) => ({
                  hostPath: folder,
                  containerPath: `${TO}/${name}`,
                  readOnly: false
                })),
                volumes: named.map(({ volume, name }) => ({
                  volume,
                  containerPath: `${FROM}/${name}`,
                  readOnly: true
                })),
                user: "0:0",
                network: "none",
                capDrop: ["ALL"],
                capAdd: COPY_CAPABILITIES,
                securityOpt: ["no-new-privileges"]
              },
              labels,
              "folder.copy"
            )
            const since = new Date(yield* Clock.currentTimeMillis)
            yield* docker.start(helper.id).pipe(Effect.mapError(failed("folder.copy")))
            // Its output is only followed until it stops: its exit code says how the copy went.
            yield* docker
              .awaitLogLine(helper.id, { since, matches: () => false })
              .pipe(Effect.mapError(failed("folder.copy")))
            const { state } = yield* docker.inspect(helper.id).pipe(Effect.mapError(failed("folder.copy")))
            if (state.running || state.exitCode !== 0) {
              return yield* new RuntimeError({ operation: "folder.copy", detail: `cp exited with ${state.exitCode}` })
            }
          })
        ),
      /** `path` (relative) of `folder` as a tar stream, undefined when missing; closed with the scope. */
      read: (folder: string, path: string, labels: Readonly<Record<string, string>>) =>
        Effect.gen(function* () {
          const helper = yield* mounting(folder, true, labels, "folder.read")
          return yield* docker
            .getArchive(helper.id, posix.join(MOUNT, path))
            .pipe(Effect.mapError(failed("folder.read")))
        })
    }
  })

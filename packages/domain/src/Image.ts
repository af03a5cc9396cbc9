/** Facts about a local container image, as the runtime reports them. */
export interface ImageInfo {
  readonly id: string
  /** The first of the image's repository digests; null for an image that was never pushed or pulled. */
  readonly digest: string | null
  readonly labels: Readonly<Record<string, string>>
  /** The user the image runs as ("" for the default, root). */
  readonly user: string
  readonly env: Readonly<Record<string, string>>
  /** The image's ENTRYPOINT and CMD ([] when it sets none). */
  readonly entrypoint: ReadonlyArray<string>
  readonly cmd: ReadonlyArray<string>
  readonly os: string
  readonly architecture: string
  /** Bytes of its layers, unpacked: about what `docker save` streams. */
  readonly size: number
}

/** A Dockerfile build, tagged by the hash of its inputs. */
export interface ImageBuildRequest {
  /** The directory sent as the build context. */
  readonly contextDir: string
  /** The Dockerfile, relative to `contextDir` and inside it. */
  readonly dockerfile: string
  readonly args: Readonly<Record<string, string>>
  /** The stage of a multi-stage Dockerfile to build. */
  readonly target?: string
  /** The image is tagged `<repository>:<hash of the build's inputs>`. */
  readonly repository: string
  readonly labels: Readonly<Record<string, string>>
}

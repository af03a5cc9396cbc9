import { PREBUILD_LABELS } from "@prbox/domain"

/** A prebuild's container and volumes carry this home's path here, never `dev.prbox.home`: no sandbox pass counts them. */
export const PREBUILD_HOME_LABEL = "dev.prbox.prebuild.home"

/**
 * A prebuild's image: its id and this home's path. A container made from an
 * image inherits its labels, so the image's are never the ones its own
 * container and volumes are found by (a sandbox made from it is not one).
 */
export const PREBUILD_IMAGE_LABELS = {
  prebuild: "dev.prbox.prebuild.image",
  home: "dev.prbox.prebuild.image.home"
} as const

/** The volume a prebuild's workspace is kept in. */
export const prebuildVolumeName = (id: string) => `prbox-prebuild-${id}`

/** The volume a prebuild's home (what its steps left in `~`) is kept in. */
export const prebuildHomeVolumeName = (id: string) => `prbox-prebuild-${id}-home`

/** The image of what a prebuild's steps changed outside its workspace and home (`docker commit`). */
export const prebuildImageTag = (id: string) => `prbox-prebuild:${id}`

/**
 * The labels of a prebuild's image: its own, and its container's (which the
 * engine copies to the image) emptied, so nothing made from it is found as
 * the prebuild's container.
 */
export const prebuildImageLabels = (id: string, home: string, install: Record<string, string>) => ({
  ...install,
  [PREBUILD_LABELS.prebuild]: "",
  [PREBUILD_LABELS.key]: "",
  [PREBUILD_HOME_LABEL]: "",
  [PREBUILD_IMAGE_LABELS.prebuild]: id,
  [PREBUILD_IMAGE_LABELS.home]: home
})

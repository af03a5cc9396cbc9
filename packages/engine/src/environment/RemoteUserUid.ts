import type { ImageInfo } from "@prbox/domain"
import { Effect, FileSystem } from "effect"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import type { SandboxUser } from "../ContainerSpec.ts"

/**
 * `updateRemoteUserUID`: the devcontainers CLI's scripts/updateUID.Dockerfile
 * (used by `updateRemoteUserUID`, src/spec-node/containerFeatures.ts), as it
 * is: the remote user's uid and gid in /etc/passwd and /etc/group become the
 * workspace owner's and its home is handed to them; a uid another user
 * already has, or a user the image lacks, leaves the image as it was (the
 * build's output says which). A build step like any of the image's own
 * (root in a build container), with no context but this file.
 */
export const UPDATE_UID_DOCKERFILE = `ARG BASE_IMAGE
FROM $BASE_IMAGE

USER root

ARG REMOTE_USER
ARG NEW_UID
ARG NEW_GID
SHELL ["/bin/sh", "-c"]
RUN eval $(sed -n "s/\${REMOTE_USER}:[^:]*:\\([^:]*\\):\\([^:]*\\):[^:]*:\\([^:]*\\).*/OLD_UID=\\1;OLD_GID=\\2;HOME_FOLDER=\\3/p" /etc/passwd); \\
	eval $(sed -n "s/\\([^:]*\\):[^:]*:\${NEW_UID}:.*/EXISTING_USER=\\1/p" /etc/passwd); \\
	eval $(sed -n "s/\\([^:]*\\):[^:]*:\${NEW_GID}:.*/EXISTING_GROUP=\\1/p" /etc/group); \\
	if [ -z "$OLD_UID" ]; then \\
		echo "Remote user not found in /etc/passwd ($REMOTE_USER)."; \\
	elif [ "$OLD_UID" = "$NEW_UID" -a "$OLD_GID" = "$NEW_GID" ]; then \\
		echo "UIDs and GIDs are the same ($NEW_UID:$NEW_GID)."; \\
	elif [ "$OLD_UID" != "$NEW_UID" -a -n "$EXISTING_USER" ]; then \\
		echo "User with UID exists ($EXISTING_USER=$NEW_UID)."; \\
	else \\
		if [ "$OLD_GID" != "$NEW_GID" -a -n "$EXISTING_GROUP" ]; then \\
			echo "Group with GID exists ($EXISTING_GROUP=$NEW_GID)."; \\
			NEW_GID="$OLD_GID"; \\
		fi; \\
		echo "Updating UID:GID from $OLD_UID:$OLD_GID to $NEW_UID:$NEW_GID."; \\
		sed -i -e "s/\\(\${REMOTE_USER}:[^:]*:\\)[^:]*:[^:]*/\\1\${NEW_UID}:\${NEW_GID}/" /etc/passwd; \\
		if [ "$OLD_GID" != "$NEW_GID" ]; then \\
			sed -i -e "s/\\([^:]*:[^:]*:\\)\${OLD_GID}:/\\1\${NEW_GID}:/" /etc/group; \\
		fi; \\
		chown -R $NEW_UID:$NEW_GID $HOME_FOLDER; \\
	fi;

ARG IMAGE_USER
USER $IMAGE_USER
`

/** Derived images are named after the image they derive from; the tag is the build's inputs' hash. */
const uidRepository = (image: string): string =>
  `prbox-uid/${image
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 100)}`

export interface RemoteUserUidRequest {
  readonly image: string
  readonly info: ImageInfo
  readonly remoteUser: string
  /** The workspace owner: who the sandbox runs as. */
  readonly owner: SandboxUser
}

/**
 * The image with the remote user's uid and gid mapped to the workspace
 * owner's. Built from the image's id (a new image under the same name is a
 * new build), reused while its inputs are unchanged.
 */
export const mapRemoteUserUid = Effect.fn("SandboxService.mapRemoteUserUid")(function* (
  runtime: ContainerRuntimeShape,
  request: RemoteUserUidRequest,
  onProgress: (line: string) => Effect.Effect<void>
) {
  const fs = yield* FileSystem.FileSystem
  const contextDir = yield* fs.makeTempDirectoryScoped({ prefix: "prbox-uid-" })
  yield* fs.writeFileString(`${contextDir}/Dockerfile`, UPDATE_UID_DOCKERFILE)
  return yield* runtime.buildImage(
    {
      contextDir,
      dockerfile: "Dockerfile",
      args: {
        BASE_IMAGE: request.info.id,
        REMOTE_USER: request.remoteUser,
        NEW_UID: String(request.owner.uid),
        NEW_GID: String(request.owner.gid),
        IMAGE_USER: request.info.user === "" ? "root" : request.info.user
      },
      repository: uidRepository(request.image),
      labels: {}
    },
    onProgress
  )
})

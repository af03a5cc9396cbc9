/** The API generation this package speaks; `/v1` in every path. A module of its own: the CLI's fast path reads it without effect. */
export const API_VERSION = 1

/**
 * The generations a daemon serves (its `GET /version` lists them as `api`),
 * and the header every one of its answers names them in, comma-separated: a
 * client that makes one request (the CLI's fast path) knows from the answer
 * itself whether it can read it.
 */
export const SERVED_API_VERSIONS: ReadonlyArray<number> = [API_VERSION]
export const API_HEADER = "prbox-api"

/** Whether an answer's `prbox-api` header (absent: undefined) names this package's generation. */
export const servesThisApi = (header: string | undefined): boolean =>
  header?.split(",").some((word) => word.trim() === String(API_VERSION)) === true

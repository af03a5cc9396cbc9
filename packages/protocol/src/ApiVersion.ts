/** The API generation this package speaks; `/v1` in every path. A module of its own: the CLI's fast path reads it without effect. */
export const API_VERSION = 1

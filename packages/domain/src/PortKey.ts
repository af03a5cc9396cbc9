// Effect-free: the CLI's fast path (apps/cli/src/Start.ts) formats ports with it.

/** The path-form segment of a port: `<port>`, or `<service>:<port>` for another service's. */
export const servicePathSegment = (port: number, service: string | undefined): string =>
  service === undefined ? String(port) : `${service}:${port}`

/** One key for a port of the sandbox: `<port>` for its own container's, `<service>:<port>` for another service's. */
export const portKey = (port: number, service: string | undefined): string => servicePathSegment(port, service)

import { createHmac } from "node:crypto"

/*
 * The secrets previews use, derived from the sandbox's access password: neither
 * reveals it, and both change with it (a rebuild or a new sandbox).
 */

const hmac = (password: string, message: string): string => createHmac("sha256", password).update(message).digest("hex")

/** What the daemon shows the sandbox's in-container relay (and what the relay accepts). */
export const relayToken = (password: string): string => hmac(password, "prbox-relay/1")

/** The bearer token (and cookie value) that opens sandbox `id`'s previews. */
export const previewToken = (password: string, id: string): string => hmac(password, `prbox-preview/1:${id}`)

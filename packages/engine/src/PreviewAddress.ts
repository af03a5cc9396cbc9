import { Context } from "effect"

/**
 * Where prboxd serves previews: one loopback TCP port, fixed while the daemon
 * runs (config.json `previewPort`, else chosen on the first start and kept in
 * the database). Sandboxes learn it through their URL template.
 */
export class PreviewAddress extends Context.Service<PreviewAddress, { readonly port: number }>()(
  "prbox/engine/PreviewAddress"
) {}

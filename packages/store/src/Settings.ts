import { Context, type Effect } from "effect"
import type { StoreError } from "./SandboxRepo.ts"

/** Setting keys, so every reader and writer names a setting the same way. */
export const SettingKey = {
  /** The loopback TCP port previews are served on, chosen on the daemon's first start (decimal). */
  previewPort: "previewPort",
  /** This home's random install id: the `dev.prbox.install` label on its containers. */
  installId: "installId"
} as const
export type SettingKey = (typeof SettingKey)[keyof typeof SettingKey]

/**
 * The daemon's own settings: values it chose and must keep across restarts.
 * Not for secrets, and not for what the user configures (that is config.json).
 */
export interface SettingsShape {
  readonly get: (key: string) => Effect.Effect<string | undefined, StoreError>
  /** Inserts or replaces the value. */
  readonly set: (key: string, value: string) => Effect.Effect<void, StoreError>
}

export class Settings extends Context.Service<Settings, SettingsShape>()("prbox/store/Settings") {}

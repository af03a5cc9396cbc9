import { ENVIRONMENT_KINDS, PROVIDERS, SANDBOX_STATUSES } from "@prbox/domain/Vocabulary"
import type { SandboxView, VersionInfo } from "@prbox/protocol"

/**
 * The daemon's answers checked without effect, for the fast path: the same
 * verdict and the same value as decoding with the protocol's schemas
 * (`SandboxView`, `VersionInfo`; QuickView.test.ts holds them to it): every
 * field checked, the keys in the schema's order, unknown keys dropped.
 * Undefined means "not what the API declares": the full CLI then asks again
 * and reports it.
 */

type Check = (value: unknown) => boolean

const string: Check = (value) => typeof value === "string"
const boolean: Check = (value) => typeof value === "boolean"
const int =
  (min: number, max = Number.MAX_SAFE_INTEGER): Check =>
  (value) =>
    Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max
const oneOf =
  (words: ReadonlyArray<string>): Check =>
  (value) =>
    typeof value === "string" && words.includes(value)
const nullOr =
  (check: Check): Check =>
  (value) =>
    value === null || check(value)
const arrayOf =
  (check: Check): Check =>
  (value) =>
    Array.isArray(value) && value.every(check)

type Fields = Readonly<Record<string, Check>>

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `value`'s fields in `fields`' order, or undefined when one is missing or fails its check (`optional` may be absent). */
const struct = (value: unknown, fields: Fields, optional: ReadonlyArray<string> = []) => {
  if (!isObject(value)) return undefined
  const out: Record<string, unknown> = {}
  for (const [key, check] of Object.entries(fields)) {
    if (!Object.hasOwn(value, key)) {
      if (optional.includes(key)) continue
      return undefined
    }
    if (!check(value[key])) return undefined
    out[key] = value[key]
  }
  return out
}

const ENVIRONMENT: Fields = {
  kind: oneOf(ENVIRONMENT_KINDS),
  path: string,
  image: string,
  imageDigest: nullOr(string)
}

const timestamp = int(0)

/** SandboxView's fields in its schema's order; `environment` is checked by `environmentOf`. */
const SANDBOX_VIEW: Fields = {
  id: (value) => typeof value === "string" && /^[a-z0-9]{12}$/.test(value),
  provider: oneOf(PROVIDERS),
  host: nullOr(string),
  account: string,
  repository: string,
  pullRequest: int(1),
  title: nullOr(string),
  sourceBranch: nullOr(string),
  sourceCommit: nullOr(string),
  workspacePath: nullOr(string),
  containerId: nullOr(string),
  hostPort: nullOr(int(1, 65535)),
  status: oneOf(SANDBOX_STATUSES),
  detail: nullOr(string),
  error: nullOr(string),
  setupError: nullOr(string),
  environment: (value) => value === null || struct(value, ENVIRONMENT, ["path"]) !== undefined,
  createdAt: timestamp,
  lastActivityAt: timestamp,
  stoppedAt: nullOr(timestamp),
  legacyRetiredAt: nullOr(timestamp),
  destroyFenced: boolean,
  url: nullOr(string),
  hasPassword: boolean
}

export const sandboxView = (value: unknown): SandboxView | undefined => {
  const view = struct(value, SANDBOX_VIEW)
  if (view === undefined) return undefined
  if (view.environment !== null) view.environment = struct(view.environment, ENVIRONMENT, ["path"])
  return view as SandboxView
}

export const sandboxList = (value: unknown): ReadonlyArray<SandboxView> | undefined => {
  if (!Array.isArray(value)) return undefined
  const views: Array<SandboxView> = []
  for (const item of value) {
    const view = sandboxView(item)
    if (view === undefined) return undefined
    views.push(view)
  }
  return views
}

const VERSION_INFO: Fields = {
  name: string,
  version: string,
  api: arrayOf(int(1)),
  pid: int(1),
  home: string,
  startedAt: timestamp
}

export const versionInfo = (value: unknown): VersionInfo | undefined =>
  struct(value, VERSION_INFO) as VersionInfo | undefined

import { ENVIRONMENT_KINDS, PROVIDERS, PULL_REQUEST_STATES, SANDBOX_STATUSES } from "@prbox/domain/Vocabulary"
import type { SandboxEvent, SandboxView } from "@prbox/protocol"

/**
 * The daemon's answers checked without effect, for the fast path: the same
 * verdict and the same value as decoding with the protocol's schemas
 * (`SandboxView`, `SandboxEvent`; QuickView.test.ts holds them to it): every
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

type Fields = Readonly<Record<string, Check>>

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A check of an object with `fields` (`optional` may be absent): the object
 * with those fields in that order (and no others), or undefined when one is
 * missing or fails its check. Made once per shape: a CLI run is too short for
 * the JIT, so the per-row work is kept to what the interpreter does fast:
 * indexed loops over arrays made here (destructuring `[key, check]` pairs in
 * a for-of made checking 200 rows four times slower).
 */
const struct = (fields: Fields, optional: ReadonlyArray<string> = []) => {
  const names = Object.keys(fields)
  const checks = names.map((name) => fields[name] as Check)
  return (value: unknown): Record<string, unknown> | undefined => {
    if (!isObject(value)) return undefined
    const keys = Object.keys(value)
    let exact = keys.length <= names.length
    let at = 0
    for (let index = 0; index < names.length; index++) {
      const name = names[index] as string
      if (!Object.hasOwn(value, name)) {
        if (optional.includes(name)) continue
        return undefined
      }
      if (!(checks[index] as Check)(value[name])) return undefined
      if (keys[at++] !== name) exact = false
    }
    // The daemon's answer is already in the schema's order: the object itself; otherwise a copy in that order.
    if (exact && at === keys.length) return value as Record<string, unknown>
    return Object.fromEntries(names.flatMap((name) => (Object.hasOwn(value, name) ? [[name, value[name]]] : [])))
  }
}

const ignoredSetting = struct({ property: string, detail: string })
const ignoredSettings: Check = (value) =>
  Array.isArray(value) && value.every((item) => ignoredSetting(item) !== undefined)

const environmentFields = struct(
  {
    kind: oneOf(ENVIRONMENT_KINDS),
    path: string,
    image: string,
    imageDigest: nullOr(string),
    ignored: ignoredSettings
  },
  ["path", "ignored"]
)

/** The environment with its fields in the schema's order, its `ignored` entries too (unknown keys dropped). */
const environment = (value: unknown): Record<string, unknown> | undefined => {
  const checked = environmentFields(value)
  if (checked === undefined || !Array.isArray(checked.ignored)) return checked
  const items = checked.ignored as ReadonlyArray<unknown>
  const ordered = items.map((item) => ignoredSetting(item))
  return ordered.every((item, index) => item === items[index]) ? checked : { ...checked, ignored: ordered }
}

const timestamp = int(0)

const sandboxId: Check = (value) => typeof value === "string" && /^[a-z0-9]{12}$/.test(value)

/** SandboxView's fields in its schema's order. */
const sandbox = struct({
  id: sandboxId,
  provider: oneOf(PROVIDERS),
  host: nullOr(string),
  account: string,
  repository: string,
  pullRequest: int(1),
  title: nullOr(string),
  author: nullOr(string),
  pullRequestState: nullOr(oneOf(PULL_REQUEST_STATES)),
  baseRef: nullOr(string),
  closedSeenAt: nullOr(timestamp),
  sourceBranch: nullOr(string),
  sourceCommit: nullOr(string),
  workspacePath: nullOr(string),
  containerId: nullOr(string),
  hostPort: nullOr(int(1, 65535)),
  status: oneOf(SANDBOX_STATUSES),
  detail: nullOr(string),
  error: nullOr(string),
  setupError: nullOr(string),
  environment: (value) => value === null || environment(value) !== undefined,
  createdAt: timestamp,
  lastActivityAt: timestamp,
  stoppedAt: nullOr(timestamp),
  legacyRetiredAt: nullOr(timestamp),
  destroyFenced: boolean,
  engine: nullOr(string),
  url: nullOr(string),
  hasPassword: boolean,
  workspaceFolder: nullOr(string)
})

export const sandboxView = (value: unknown): SandboxView | undefined => {
  const view = sandbox(value)
  if (view === undefined || view.environment === null) return view as SandboxView | undefined
  const checked = environment(view.environment)
  return (checked === view.environment ? view : { ...view, environment: checked }) as SandboxView
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

const tag =
  (name: string): Check =>
  (value) =>
    value === name
const journal = { seq: int(1), sandboxId, at: timestamp, status: oneOf(SANDBOX_STATUSES) }
const statusChanged = struct({ _tag: tag("StatusChanged"), ...journal, error: nullOr(string) })
const progress = struct({ _tag: tag("Progress"), ...journal, line: string })

/** One event of a sandbox's stream (a status change or a progress line). */
export const sandboxEvent = (value: unknown): SandboxEvent | undefined =>
  (statusChanged(value) ?? progress(value)) as SandboxEvent | undefined

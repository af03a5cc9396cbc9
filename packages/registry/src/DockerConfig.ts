import { Result } from "effect"
import { Base64 } from "effect/encoding"
import { type Credentials, identityTokenCredentials, passwordCredentials } from "./Credentials.ts"

/**
 * Where Docker's config.json keeps a registry's credentials, decided as the
 * docker CLI decides it. Pure: the caller reads the file and runs the helper.
 */
export type CredentialSource =
  /** Run `docker-credential-<helper> get`; its answer is final (Docker falls back to nothing). */
  | { readonly _tag: "Helper"; readonly helper: string }
  | { readonly _tag: "Stored"; readonly credentials: Credentials }
  | { readonly _tag: "None" }

// A helper is a program name on PATH: never a path.
const helperPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

/** The host an `auths` key names, as Docker compares them: no scheme, nothing after the first `/`. */
export const authsKeyHost = (key: string): string => {
  const bare = key.replace(/^https?:\/\//i, "")
  const slash = bare.indexOf("/")
  return (slash === -1 ? bare : bare.slice(0, slash)).toLowerCase()
}

const helperSource = (helper: unknown, where: string): Result.Result<CredentialSource, string> => {
  if (typeof helper !== "string" || !helperPattern.test(helper)) {
    return Result.fail(`${where} names no credential helper Docker could run`)
  }
  return Result.succeed({ _tag: "Helper", helper })
}

/** An `auths` entry: `identitytoken`, else `auth` (base64 of `user:password`), else `username` and `password`. */
const storedSource = (entry: unknown, key: string): Result.Result<CredentialSource, string> => {
  if (!isRecord(entry)) return Result.fail(`auths["${key}"] is not an object`)
  const token = text(entry.identitytoken)
  if (token !== undefined) return Result.succeed({ _tag: "Stored", credentials: identityTokenCredentials(token) })
  const auth = text(entry.auth)
  if (auth !== undefined) {
    const decoded = Base64.decodeString(auth)
    const colon = Result.isSuccess(decoded) ? decoded.success.indexOf(":") : -1
    if (!Result.isSuccess(decoded) || colon < 1) {
      return Result.fail(`auths["${key}"].auth is not base64 of user:password`)
    }
    const credentials = passwordCredentials(decoded.success.slice(0, colon), decoded.success.slice(colon + 1))
    return Result.succeed({ _tag: "Stored", credentials })
  }
  const username = text(entry.username)
  const password = text(entry.password)
  if (username !== undefined && password !== undefined) {
    return Result.succeed({ _tag: "Stored", credentials: passwordCredentials(username, password) })
  }
  // Docker leaves `{}` under a registry whose credentials a store keeps.
  return Result.succeed({ _tag: "None" })
}

/**
 * Where `config` (config.json, parsed) keeps `registry`'s credentials
 * (`host[:port]`, compared without case): `credHelpers[registry]`, else
 * `credsStore`, else `auths[registry]`. Fails with a sentence (naming keys,
 * never values) when the entry that applies cannot be used.
 */
export const credentialSource = (config: unknown, registry: string): Result.Result<CredentialSource, string> => {
  if (!isRecord(config)) return Result.fail("is not a JSON object")
  const wanted = registry.toLowerCase()
  const helpers = isRecord(config.credHelpers) ? config.credHelpers : {}
  const helperKey = Object.keys(helpers).find((key) => key.toLowerCase() === wanted)
  if (helperKey !== undefined) return helperSource(helpers[helperKey], `credHelpers["${helperKey}"]`)
  if (config.credsStore !== undefined && config.credsStore !== "") return helperSource(config.credsStore, "credsStore")
  const auths = isRecord(config.auths) ? config.auths : {}
  const keys = Object.keys(auths)
  const authKey = keys.find((key) => key.toLowerCase() === wanted) ?? keys.find((key) => authsKeyHost(key) === wanted)
  return authKey === undefined ? Result.succeed({ _tag: "None" }) : storedSource(auths[authKey], authKey)
}

/**
 * A credential helper's answer to `get` (`{"Username": …, "Secret": …}`):
 * the user `<token>` means the secret is an identity token. An empty answer
 * is no credentials.
 */
export const helperAnswer = (stdout: string): Result.Result<Credentials | undefined, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(stdout)
  } catch {
    return Result.fail("answered with something other than JSON")
  }
  if (!isRecord(parsed)) return Result.fail("answered with something other than a JSON object")
  const username = typeof parsed.Username === "string" ? parsed.Username : ""
  const secret = typeof parsed.Secret === "string" ? parsed.Secret : ""
  if (secret === "") return Result.succeed(undefined)
  if (username === "<token>") return Result.succeed(identityTokenCredentials(secret))
  if (username === "") return Result.fail("answered with a secret but no user name")
  return Result.succeed(passwordCredentials(username, secret))
}

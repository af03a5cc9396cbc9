import type { Provider } from "@prbox/domain"
import { Effect, Fiber, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"

/**
 * The user's own credential for a code host's API: read when asked, never
 * stored by prbox. A token goes in a bearer header; Bitbucket Cloud also
 * takes a user name and password (an API token or app password).
 */
export type HostCredential =
  | { readonly _tag: "Token"; readonly token: string }
  | { readonly _tag: "Basic"; readonly username: string; readonly password: string }

const basicPair = (username: string, password: string): string =>
  Buffer.from(`${username}:${password}`).toString("base64")

/**
 * The secret strings of a credential, to be kept out of every answer: a
 * Basic credential's encoded pair too, which a service echoing its
 * `Authorization` header would otherwise show.
 */
export const secretsOf = (credential: HostCredential): ReadonlyArray<string> =>
  credential._tag === "Token"
    ? [credential.token]
    : [credential.password, basicPair(credential.username, credential.password)]

/** The `Authorization` header's value. */
export const authorization = (credential: HostCredential): string =>
  credential._tag === "Token"
    ? `Bearer ${credential.token}`
    : `Basic ${basicPair(credential.username, credential.password)}`

type Env = Readonly<Record<string, string | undefined>>

const first = (env: Env, names: ReadonlyArray<string>): string | undefined =>
  names.map((name) => env[name]).find((value) => value !== undefined && value !== "")

/**
 * The host a CLI's host variable names (`GH_HOST`, `GITLAB_HOST`: a name,
 * `name:port` or a URL), as prbox spells a host; undefined when unset.
 */
export const namedHost = (value: string | undefined): string | undefined => {
  const bare = (value ?? "")
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")
    .split("/")[0]
    ?.toLowerCase()
    .replace(/^www\./, "")
  return bare === undefined || bare === "" ? undefined : bare
}

/**
 * The variables a user sets for a host, in the order the hosts' own CLIs
 * read them; each token only for the host it is for, never for whatever
 * host a link names (a link can be anyone's: a PR's text, an agent's tool
 * call): GitHub's for github.com, its Enterprise one for the host `GH_HOST`
 * names, GitLab's for gitlab.com or the host `GITLAB_HOST` (or `GL_HOST`)
 * names, Bitbucket's for bitbucket.org. Any other host gets what git's
 * credential helpers hold for it, if anything.
 */
const fromEnv = (provider: Provider, host: string, env: Env): HostCredential | undefined => {
  const token = (names: ReadonlyArray<string>) => {
    const value = first(env, names)
    return value === undefined ? undefined : ({ _tag: "Token", token: value } as const)
  }
  switch (provider) {
    case "github":
      if (host === "github.com") return token(["GH_TOKEN", "GITHUB_TOKEN"])
      return host === namedHost(env.GH_HOST) ? token(["GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"]) : undefined
    case "gitlab":
      return host === (namedHost(first(env, ["GITLAB_HOST", "GL_HOST"])) ?? "gitlab.com")
        ? token(["GITLAB_TOKEN"])
        : undefined
    case "bitbucket": {
      if (host !== "bitbucket.org") return undefined
      const email = first(env, ["BITBUCKET_EMAIL"])
      const apiToken = first(env, ["BITBUCKET_API_TOKEN"])
      if (email !== undefined && apiToken !== undefined) return { _tag: "Basic", username: email, password: apiToken }
      return token(["BITBUCKET_TOKEN"])
    }
    default:
      return undefined
  }
}

/** What `git credential fill` is asked: the host over https, nothing else. */
export const credentialQuery = (host: string): string => `protocol=https\nhost=${host}\n\n`

/** `git credential fill`'s answer: its user name and password, when it gave a password. */
export const parseCredential = (output: string): { username: string; password: string } | undefined => {
  const field = (name: string) =>
    output
      .split("\n")
      .find((line) => line.startsWith(`${name}=`))
      ?.slice(name.length + 1)
  const password = field("password")
  return password === undefined || password === "" ? undefined : { username: field("username") ?? "", password }
}

/**
 * Asks the user's git credential helpers for the host. Prompting is off (no
 * terminal, no askpass), so it never waits on a person; bounded in time.
 */
const fromGit = (host: string, timeoutMs: number) =>
  Effect.gen(function* () {
    const fill = Effect.gen(function* () {
      const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
      const handle = yield* spawner.spawn(
        ChildProcess.make("git", ["credential", "fill"], {
          env: { GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "", SSH_ASKPASS: "" },
          extendEnv: true,
          stdin: { stream: Stream.make(new TextEncoder().encode(credentialQuery(host))) }
        })
      )
      const [stdout, exitCode] = yield* Effect.all(
        [handle.stdout.pipe(Stream.decodeText(), Stream.mkString), handle.exitCode, Stream.runDrain(handle.stderr)],
        { concurrency: "unbounded" }
      )
      return exitCode === 0 ? parseCredential(stdout) : undefined
    }).pipe(
      Effect.scoped,
      Effect.orElseSucceed(() => undefined)
    )
    // A helper that hangs is stopped in the background: reaping its process
    // group can outlast the bound (zombies where nothing reaps them).
    const fiber = yield* Effect.forkDetach(fill)
    return yield* Fiber.join(fiber).pipe(
      Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.succeed(undefined) }),
      Effect.ensuring(Effect.forkDetach(Fiber.interrupt(fiber)))
    )
  })

/**
 * The user's credential for a code host's API: the host's environment
 * variables first, then git's credential helpers for `https://<host>`.
 * Undefined when there is none (CodeCommit's is the AWS SDK's own chain).
 */
export const hostCredential = Effect.fn("HostCredentials.hostCredential")(function* (
  provider: Provider,
  host: string,
  options: { readonly timeoutMs: number; readonly env?: Env }
) {
  if (provider !== "github" && provider !== "gitlab" && provider !== "bitbucket") return undefined
  const env = fromEnv(provider, host, options.env ?? process.env)
  if (env !== undefined) return env
  const stored = yield* fromGit(host, options.timeoutMs)
  if (stored === undefined) return undefined
  return provider === "bitbucket"
    ? ({ _tag: "Basic", username: stored.username, password: stored.password } as const)
    : ({ _tag: "Token", token: stored.password } as const)
})

/** What a user sets so that the host's API answers. */
export const configureHint = (provider: Provider, host: string, profile: string | undefined): string => {
  const approve = (what: string) => `store ${what} with \`git credential approve\` for ${host}`
  switch (provider) {
    case "github":
      return host === "github.com"
        ? `set GH_TOKEN or ${approve("a token")}`
        : `set GH_ENTERPRISE_TOKEN with GH_HOST=${host}, or ${approve("a token")}`
    case "gitlab":
      return host === "gitlab.com"
        ? `set GITLAB_TOKEN or ${approve("a token")}`
        : `set GITLAB_TOKEN with GITLAB_HOST=${host}, or ${approve("a token")}`
    case "bitbucket":
      return host === "bitbucket.org"
        ? `set BITBUCKET_EMAIL and BITBUCKET_API_TOKEN (or BITBUCKET_TOKEN), or ${approve("a user name and API token")}`
        : approve("a user name and token")
    case "codecommit": {
      const flag = profile === undefined ? "" : ` --profile ${profile}`
      return `configure AWS credentials${profile === undefined ? "" : ` for profile ${profile}`} (\`aws configure${flag}\` or \`aws sso login${flag}\`)`
    }
    default:
      return "nothing to configure: a plain git remote has no hosting service"
  }
}

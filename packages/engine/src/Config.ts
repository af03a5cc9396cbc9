import { ConfiguredPort, DEFAULT_DOTFILES_TARGET, dotfilesTarget, HostPort, posixPath } from "@prbox/domain"
import { Context, Effect, type FileSystem, Layer, Schema } from "effect"
import type { PlatformError } from "effect/PlatformError"
import { hostErrorCode, InvalidConfig } from "./Errors.ts"

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const Argv = Schema.Array(Schema.String).check(Schema.isMinLength(1))
const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value)))

/** A registry as an image's name starts with it: `host[:port]`, no scheme, no path. */
const RegistryHost = Schema.String.check(
  Schema.isPattern(/^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/, {
    message: "a registry is host[:port], without a scheme or a path"
  })
)

/** Where features are published: `host[:port]/<namespace>`, as a feature's reference starts. */
const FeaturesRegistry = Schema.String.check(
  Schema.isPattern(
    /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+$/,
    {
      message:
        "featuresRegistry is host[:port]/<namespace>, without a scheme, e.g. a registry and devcontainers/features"
    }
  )
)

const NonEmpty = Schema.String.check(Schema.isMinLength(1))

/** `targetPath`: a folder inside the sandbox user's home (domain `dotfilesTarget`). */
const DotfilesTarget = Schema.String.check(
  Schema.makeFilter((path: string) => {
    const target = dotfilesTarget(path)
    return target._tag === "Inside" ? undefined : target.reason
  })
)

/**
 * The user's dotfiles, as the devcontainers CLI's `--dotfiles-*` options:
 * the repository (a URL, `owner/name`, or a path on this machine), the
 * command that installs them (absent: the first of the CLI's names the
 * repository has), and where in the sandbox user's home they go. A plain
 * string is the repository alone.
 */
const Dotfiles = Schema.Union([
  NonEmpty,
  Schema.Struct({
    repository: NonEmpty,
    installCommand: Schema.optionalKey(NonEmpty),
    targetPath: withDefault(DotfilesTarget, DEFAULT_DOTFILES_TARGET)
  })
])

/** The dotfiles setting in its one form (a plain string's with the default `targetPath`), or none. */
export const dotfilesOf = (
  config: PrboxConfig
): { readonly repository: string; readonly installCommand?: string; readonly targetPath: string } | undefined =>
  typeof config.dotfiles === "string"
    ? { repository: config.dotfiles, targetPath: DEFAULT_DOTFILES_TARGET }
    : config.dotfiles

export const Mount = Schema.Struct({
  source: Schema.String,
  target: Schema.String.check(Schema.isStartingWith("/")),
  readOnly: withDefault(Schema.Boolean, true)
})
export type Mount = typeof Mount.Type

/** `~/.prbox/config.json`; every field is optional. */
export const PrboxConfig = Schema.Struct({
  /** The image of sandboxes whose PR has no devcontainer.json; absent, prbox's default image. */
  image: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  /**
   * Repositories whose devcontainer.json may widen their container (`runArgs`,
   * capabilities, mounts under your home, a root user): `host/org/repo` or
   * `host/org/*`. Only here, never from the PR itself.
   */
  trustedRepositories: withDefault(Schema.Array(Schema.String.check(Schema.isMinLength(1))), []),
  /**
   * Registries (`host[:port]`, as in an image's name) whose Docker
   * credentials prbox may use on this host, for image pulls and features:
   * your `docker login` (config.json's `auths`, `credHelpers`, `credsStore`).
   * Every other registry is asked anonymously, so a PR cannot pull your
   * private images or features into its sandbox. The credentials never reach
   * a build, a container, a label or a log.
   */
  registryCredentials: withDefault(Schema.Array(RegistryHost), []),
  /**
   * Registries and feature servers on this machine (`localhost:<port>`,
   * `127.0.0.1:<port>`) a PR's features and images may be fetched from.
   * Any other loopback address is refused: a PR must not make prbox reach
   * the services you run locally.
   */
  localRegistries: withDefault(Schema.Array(RegistryHost), []),
  /**
   * What an untrusted PR's widening does to its open: "omit" opens the
   * sandbox without it (listed in its environment), "refuse" refuses the open.
   */
  untrustedWidening: withDefault(Schema.Literals(["omit", "refuse"]), "omit"),
  /**
   * Where the devcontainers features are published (`host[:port]/<namespace>`):
   * a PR's deprecated short feature id (`"docker-in-docker": {}`) is read as
   * `<featuresRegistry>/docker-in-docker:1`, as the devcontainers CLI reads it.
   * Absent, such an id is refused with an error naming this setting.
   */
  featuresRegistry: Schema.optionalKey(FeaturesRegistry),
  setupCommands: withDefault(Schema.Array(Schema.String), []),
  env: withDefault(Schema.Record(Schema.String, Schema.String), {}),
  /** Extra container labels, for the user's own tooling (prbox's own `dev.prbox.*` labels win). */
  labels: withDefault(Schema.Record(Schema.String, Schema.String), {}),
  mounts: withDefault(Schema.Array(Mount), []),
  cpus: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0))),
  memoryMb: Schema.optionalKey(PositiveInt),
  pidsLimit: Schema.optionalKey(PositiveInt),
  healthTimeoutSeconds: withDefault(PositiveInt, 120),
  /** How long the user's shell may take to give its environment (`userEnvProbe`; the CLI's 10 s). */
  userEnvProbeTimeoutSeconds: withDefault(PositiveInt, 10),
  idleTimeoutMinutes: withDefault(PositiveInt, 30),
  cleanupDelayHours: withDefault(PositiveInt, 24),
  gcIntervalMinutes: withDefault(PositiveInt, 5),
  /**
   * gc deletes the sandboxes of merged or closed pull requests, `closedGraceMinutes`
   * after it first saw the state (never while a sandbox is in use).
   */
  deleteWhenClosed: withDefault(Schema.Boolean, false),
  closedGraceMinutes: withDefault(PositiveInt, 60),
  /**
   * The Docker engine sandboxes are made on: an address (`unix://`, `tcp://`,
   * `ssh://user@host`) or a Docker context's name. Absent: DOCKER_HOST, then
   * the current Docker context, then the local socket. Read at the daemon's start.
   */
  runtime: Schema.optionalKey(
    Schema.Struct({
      docker: Schema.Struct({
        host: Schema.optionalKey(Schema.String),
        context: Schema.optionalKey(Schema.String)
      })
    })
  ),
  /** For plain git remotes: the ref a PR number names, `{n}` replaced. */
  pullRequestRefPattern: withDefault(Schema.String.check(Schema.isIncluding("{n}")), "refs/pull/{n}/head"),
  profile: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  /**
   * The loopback TCP port the daemon serves previews on. Absent, a free one is
   * chosen on the daemon's first start and kept in its database.
   */
  previewPort: Schema.optionalKey(HostPort),
  /** Ports every sandbox lists (with their labels), listening or not, after its devcontainer.json's. */
  ports: withDefault(Schema.Array(ConfiguredPort), []),
  hooks: withDefault(
    Schema.Struct({
      onSandboxReady: Schema.optionalKey(Argv),
      onSandboxDestroy: Schema.optionalKey(Argv)
    }),
    {}
  ),
  /**
   * The git identity commits in a sandbox carry, over the host's own
   * (`git config --global user.name`/`user.email`); never a credential or a signing key.
   */
  git: withDefault(
    Schema.Struct({
      name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
      email: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1)))
    }),
    {}
  ),
  dotfiles: Schema.optionalKey(Dotfiles),
  /**
   * Prebuilds: a repository's base branch with its create-time steps done,
   * kept by content so a PR with the same environment starts from it. Kept
   * under `maxGiB` (oldest first over it) and for `keepDays` since last
   * used; `false` turns them off.
   */
  prebuilds: withDefault(
    Schema.Union([
      Schema.Literal(false),
      Schema.Struct({
        maxGiB: withDefault(Schema.Number.check(Schema.isGreaterThan(0)), 10),
        keepDays: withDefault(PositiveInt, 7)
      })
    ]),
    {}
  ),
  /**
   * The warm pool: for an environment key with a ready prebuild, `size`
   * started containers of it (code-server up, the base's checkout, no PR's
   * code) wait for an open to claim one; one idle past `idleMinutes` is
   * removed by gc. `size: 0` turns it off. Local engine, image-only
   * environments (image, Dockerfile, features) only.
   */
  warmPool: withDefault(
    Schema.Struct({
      size: withDefault(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 8 })), 1),
      idleMinutes: withDefault(PositiveInt, 30)
    }),
    {}
  ),
  /**
   * What `prbox mcp` lets agents do beyond what a user's own PR links reach:
   * open local repositories, push a sandbox's commits (`sandbox_push`).
   */
  mcp: withDefault(
    Schema.Struct({
      allowLocalPaths: withDefault(Schema.Boolean, false),
      allowPush: withDefault(Schema.Boolean, false)
    }),
    {}
  )
})
export type PrboxConfig = typeof PrboxConfig.Type

const isInside = (parent: string, child: string): boolean => {
  const rel = posixPath.relative(parent, child)
  return rel === "" || (!rel.startsWith("..") && !posixPath.isAbsolute(rel))
}

/**
 * Extra mounts must stay inside the user's home, after resolving `..` and
 * symlinks: a config (or a trusted repository) must not be able to hand a
 * sandbox `/etc` or `~/..`. `path` and `property` name where they came from.
 */
export const checkMounts = <M extends Mount>(
  fs: FileSystem.FileSystem,
  path: string,
  home: string,
  mounts: ReadonlyArray<M>,
  property = "mounts"
) =>
  Effect.forEach(mounts, (mount, index) =>
    Effect.gen(function* () {
      const where = `${property}[${index}].source`
      const lexical = posixPath.resolve(home, mount.source)
      const real = yield* fs
        .realPath(lexical)
        .pipe(Effect.mapError(() => new InvalidConfig({ path, detail: `${where}: ${mount.source} does not exist` })))
      const unresolved = (error: PlatformError) =>
        new InvalidConfig({ path, detail: `${where}: your home cannot be resolved (${hostErrorCode(error)})` })
      const realHome = yield* Effect.mapError(fs.realPath(home), unresolved)
      if (!isInside(home, lexical) || !isInside(realHome, real)) {
        return yield* new InvalidConfig({ path, detail: `${where}: ${mount.source} is outside your home directory` })
      }
      return { ...mount, source: real }
    })
  )

export interface ConfigShape {
  /** Reads the config afresh: a fix to the file applies to the next open without a restart. */
  readonly load: Effect.Effect<PrboxConfig, InvalidConfig>
  readonly home: string
  /** The user's home folder: extra mounts (config.json's, a trusted repository's) must stay inside it. */
  readonly userHome: string
}

export class Config extends Context.Service<Config, ConfigShape>()("prbox/engine/Config") {
  /** Supplies a fixed config, for tests. */
  static readonly layerStatic = (home: string, config: Partial<PrboxConfig>, userHome: string) =>
    Layer.succeed(
      Config,
      Config.of({
        home,
        userHome,
        load: Schema.decodeUnknownEffect(PrboxConfig)(config).pipe(
          Effect.mapError((error) => new InvalidConfig({ path: "<static>", detail: String(error) }))
        )
      })
    )
}

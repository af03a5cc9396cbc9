import {
  DOTFILES_INSTALL_NAMES,
  dotfilesSource,
  dotfilesTarget,
  type EnvironmentPlan,
  type Sandbox
} from "@prbox/domain"
import { redactCredentials, Workspaces } from "@prbox/git"
import { Context, Effect, Layer } from "effect"
import { homeEnvFor } from "../CodeServerSpec.ts"
import { Config, dotfilesOf, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { mapStoreErrors, safeReason } from "../Errors.ts"
import { Lifecycle } from "../Lifecycle.ts"

/** The install's bounds: a lifecycle step's. */
const INSTALL_TIMEOUT_MS = 30 * 60_000
const INSTALL_OUTPUT_BYTES = 1024 * 1024
/** Files past this are not a home's settings: the dotfiles are refused, never cut. */
export const MAX_DOTFILES_BYTES = 64 * 1024 * 1024

/**
 * Run by `sh` in the container as the sandbox user, the archive of the
 * dotfiles on its stdin: `$1` the target relative to the home, `$2` the
 * configured install command (or ""), then the names tried without one.
 * As the devcontainers CLI's script (src/spec-common/dotfiles.ts at
 * f683c29f64a20109b4453e5149807e390ff65133): a target already there (a
 * rebuild keeps the home) is installed from as it is; `installCommand` is
 * looked for in the target, then as given; without one the first name that
 * exists runs, and with none the repository's top-level dotfiles (not
 * `.git`) are linked into the home. Exits 125 when the files cannot be
 * unpacked, 126 when the install command is not there.
 */
export const INSTALL_SH = `target="$HOME/$1"
command=$2
shift 2
if [ -e "$target" ] || [ -L "$target" ]; then
  echo "$target is there already: installing from it"
else
  mkdir -p "$target" && tar -x -f - -C "$target" || { echo "could not unpack the dotfiles into $target"; exit 125; }
fi
cd "$target" || exit 125
run=
if [ -n "$command" ]; then
  if [ -f "./$command" ]; then run="./$command"
  elif [ -f "$command" ]; then run=$command
  else echo "could not find $command"; exit 126
  fi
else
  for name in "$@"; do
    if [ -e "$name" ]; then run="./$name"; break; fi
  done
fi
if [ -z "$run" ]; then
  linked=
  for file in .[!.]* ..?*; do
    { [ -e "$file" ] || [ -L "$file" ]; } && [ "$file" != .git ] || continue
    if [ -d "$HOME/$file" ] && [ ! -L "$HOME/$file" ]; then echo "not linked: ~/$file is a folder"; continue; fi
    ln -sfn "$target/$file" "$HOME/$file" && linked="$linked $file"
  done
  if [ -n "$linked" ]; then echo "linked into the home:$linked"; else echo "no install script and no dotfiles found"; fi
  exit 0
fi
[ -x "$run" ] || chmod +x "$run"
echo "running $run"
"$run" </dev/null
`

/** Where git fetches the dotfiles from: a URL, or a folder on this machine. */
const remoteOf = (repository: string, userHome: string): string => {
  const source = dotfilesSource(repository, userHome)
  return source._tag === "Url" ? source.url : source.path
}

/**
 * The user's dotfiles into a new container: fetched on this machine with
 * the user's credentials into a mirror in prbox's state (`fetchRemoteHead`),
 * their files archived there (`git archive`: host git never runs in the
 * sandbox's home or workspace), unpacked and installed in the container by
 * its user (`INSTALL_SH`). Output goes to the progress log; the answer is
 * null when they installed (or none are configured), else the reason, the
 * row's `setupError`: never the output, which may hold what the scripts print.
 */
const make = Effect.gen(function* () {
  const workspaces = yield* Workspaces
  const runtime = yield* ContainerRuntime
  const { userHome } = yield* Config
  const { emit, progress } = yield* Lifecycle

  return Effect.fn("SandboxService.dotfiles")(function* (
    row: Sandbox,
    containerId: string,
    user: string,
    plan: EnvironmentPlan,
    config: PrboxConfig,
    /** The user's probed environment; `remoteEnv` wins over it, as for the lifecycle steps. */
    probed: Readonly<Record<string, string>>
  ) {
    const setting = dotfilesOf(config)
    if (setting === undefined) return null
    const target = dotfilesTarget(setting.targetPath)
    if (target._tag === "Refused") return `dotfiles: ${target.reason}`
    const remote = remoteOf(setting.repository, userHome)
    const shown = redactCredentials(remote)
    yield* progress(row, `dotfiles: fetching ${shown}`)
    const files = yield* workspaces.fetchRemoteHead(remote).pipe(
      Effect.flatMap(({ mirrorPath, commit }) => workspaces.archiveCommit(mirrorPath, commit, MAX_DOTFILES_BYTES)),
      Effect.map((archive) => ({ _tag: "Fetched", archive }) as const),
      Effect.catch((error) =>
        Effect.succeed({ _tag: "Failed", reason: `dotfiles from ${shown}: ${safeReason(error)}` } as const)
      )
    )
    if (files._tag === "Failed") {
      yield* progress(row, `${files.reason}; setup ended there`)
      return files.reason
    }
    yield* progress(row, `dotfiles: installing into ~/${target.relative}`)
    const names = DOTFILES_INSTALL_NAMES
    const result = yield* runtime.exec(
      containerId,
      ["sh", "-c", INSTALL_SH, "prbox-dotfiles", target.relative, setting.installCommand ?? "", ...names],
      {
        user,
        cwd: "/",
        env: { ...probed, ...plan.remoteEnv, ...homeEnvFor(plan) },
        stdin: files.archive,
        timeoutMs: INSTALL_TIMEOUT_MS,
        maxOutputBytes: INSTALL_OUTPUT_BYTES
      }
    )
    for (const line of (result.stdout + result.stderr).split("\n").filter((l) => l.length > 0)) {
      yield* emit(row.id, row.status, `[dotfiles] ${line}`).pipe(mapStoreErrors("sandbox.log"))
    }
    const what = `dotfiles: ${setting.installCommand ?? "the install"}`
    const reason = result.timedOut
      ? `${what} timed out`
      : result.exitCode !== 0
        ? `${what} failed with exit code ${result.exitCode}`
        : null
    if (reason !== null) yield* progress(row, `${reason}; setup ended there`)
    return reason
  })
})

export class Dotfiles extends Context.Service<Dotfiles, Effect.Success<typeof make>>()("prbox/engine/Dotfiles") {
  static readonly layer = Layer.effect(Dotfiles, make)
}

import { RESOLVE_SH } from "./WorkspaceResolve.ts"

/**
 * The shell scripts the workspace's file and diff operations run inside the
 * sandbox's container (one `docker exec` each), as `sh -c <script>
 * prbox-files <args...>`. POSIX sh and tools both coreutils and busybox have;
 * every one starts with `prbox_resolve` (WorkspaceResolve.ts). Their own
 * refusals exit with the codes below (under the resolver's 120..123).
 */
export const EXIT = {
  isDirectory: 110,
  notRegularFile: 111,
  tooLarge: 112,
  changed: 113,
  notDirectory: 114,
  noGit: 115,
  gitFailed: 116,
  noTemporary: 117,
  noHeadCommit: 118,
  cannotWrite: 119,
  cannotRead: 109
} as const

/** The argv that runs `script` with `args` as $1...; `$0` names it in `ps`. */
export const scriptArgv = (script: string, args: ReadonlyArray<string>): ReadonlyArray<string> => [
  "sh",
  "-c",
  `${RESOLVE_SH}${script}`,
  "prbox-files",
  ...args
]

/** md5sum where the image has it, else POSIX cksum: the same tool for an edit's read and its write. */
const SUM_SH = `prbox_sum() { if command -v md5sum >/dev/null 2>&1; then md5sum < "$1"; else cksum < "$1"; fi; }
`

/**
 * `<workspace> <path> <first line> <last line|$> <bytes>`: prints `<size>
 * <lines> <NULs in the first 8000 bytes> <1 when the last line has no
 * newline>`, then (no NUL) at most `<bytes>` bytes of the lines asked for
 * (busybox's sed ends a last line with a newline; GNU's does not). Never
 * reads more of the file into memory.
 */
export const READ_SH = `prbox_resolve "$1" "$2" 1
[ -d "$R" ] && exit ${EXIT.isDirectory}
[ -f "$R" ] || exit ${EXIT.notRegularFile}
[ -r "$R" ] || exit ${EXIT.cannotRead}
size=$(wc -c < "$R") || exit ${EXIT.cannotRead}
lines=$(sed -n '$=' "$R") || exit ${EXIT.cannotRead}
nul=$(head -c 8000 "$R" | tr -cd '\\000' | wc -c)
unterminated=$(tail -c 1 "$R" | tr -d '\n' | wc -c)
echo $size \${lines:-0} $nul $unterminated
[ $nul -eq 0 ] || exit 0
sed -n "$3,$4p;$4q" "$R" | head -c "$5"
`

/**
 * `<workspace> <path> <depth> <bytes>`: entries NUL-terminated as `<type f|d|l|o>
 * <size|-> <path from the folder>`, one depth level after the other (a cut
 * listing has its shallow levels whole), `.git`'s insides left out.
 */
export const LIST_SH = `prbox_resolve "$1" "$2" 1
[ -d "$R" ] || exit ${EXIT.notDirectory}
cd -- "$R" 2>/dev/null || exit ${EXIT.cannotRead}
d=1; level='./*'
while [ $d -le "$3" ]; do
  find . -maxdepth $d -name .git ! -path "$level" -prune -o -path "$level" ! -path "$level/*" -exec sh -c '
    for f; do
      if [ -L "$f" ]; then t=l s=-
      elif [ -d "$f" ]; then t=d s=-
      elif [ -f "$f" ]; then t=f; s=$(stat -c %s -- "$f" 2>/dev/null) || s=-
      else t=o s=-; fi
      printf "%s %s %s\\000" "$t" "$s" "\${f#./}"
    done' prbox-list {} +
  d=$((d + 1)); level="$level/*"
done | head -c "$4"
`

/**
 * `<workspace> <path> <byte limit>`: prints `<size> <checksum line>`, then
 * the whole file; over the limit it exits \`tooLarge\`.
 */
export const EDIT_READ_SH = `${SUM_SH}prbox_resolve "$1" "$2" 1
[ -d "$R" ] && exit ${EXIT.isDirectory}
[ -f "$R" ] || exit ${EXIT.notRegularFile}
[ -r "$R" ] || exit ${EXIT.cannotRead}
size=$(wc -c < "$R") || exit ${EXIT.cannotRead}
[ $size -le "$3" ] || exit ${EXIT.tooLarge}
sum=$(prbox_sum "$R") || exit ${EXIT.cannotRead}
echo $size "$sum"
cat -- "$R" || exit ${EXIT.cannotRead}
`

/**
 * `<workspace> <path> [<checksum line>]`: stdin becomes the file (its
 * missing folders made); prints 1 when it was created. With a checksum the
 * file must still have it (an edit's read), else it exits \`changed\`.
 */
export const WRITE_SH = `${SUM_SH}prbox_resolve "$1" "$2" 0
[ -d "$R" ] && exit ${EXIT.isDirectory}
created=1
if [ -e "$R" ]; then [ -f "$R" ] || exit ${EXIT.notRegularFile}; created=0; fi
if [ -n "$3" ]; then [ "$(prbox_sum "$R")" = "$3" ] || exit ${EXIT.changed}; fi
mkdir -p -- "\${R%/*}" 2>/dev/null || exit ${EXIT.cannotWrite}
cat > "$R" 2>/dev/null || exit ${EXIT.cannotWrite}
echo $created
`

/**
 * `<workspace> <commit> <stat 0|1> <bytes> <paths...>`: the workspace
 * (untracked files too) against the commit, through a temporary index (the
 * user's own index and files are untouched): at most `<bytes>` bytes of it.
 * The stat info of the user's index is reused, so only changed files are hashed;
 * its copy keeps the index's time (`cp -p`), which is how git tells a file
 * changed in the second the index was written (same size, same mtime second).
 */
export const DIFF_HEAD_SH = `command -v git >/dev/null 2>&1 || exit ${EXIT.noGit}
cd -- "$1" 2>/dev/null || exit 123
git rev-parse --git-dir >/dev/null 2>&1 || exit ${EXIT.gitFailed}
commit=$2; stat=$3; limit=$4; shift 4
t=$(mktemp -d 2>/dev/null) || exit ${EXIT.noTemporary}
trap 'rm -rf -- "$t"' EXIT
index=$(git rev-parse --git-path index)
GIT_INDEX_FILE="$t/index"; export GIT_INDEX_FILE
git cat-file -e "$commit^{commit}" 2>/dev/null || exit ${EXIT.noHeadCommit}
{ cp -p -- "$index" "$t/index" 2>/dev/null && git read-tree -m "$commit" 2>/dev/null; } ||
  { rm -f -- "$t/index"; git read-tree "$commit" 2>/dev/null; } || exit ${EXIT.gitFailed}
git add -A >/dev/null 2>&1 || exit ${EXIT.gitFailed}
if [ "$stat" = 1 ]; then set -- --stat "$commit" -- "$@"; else set -- "$commit" -- "$@"; fi
git -c core.quotePath=false diff --cached --no-ext-diff --no-textconv --no-color "$@" > "$t/out" 2>/dev/null ||
  exit ${EXIT.gitFailed}
head -c "$limit" "$t/out"
`

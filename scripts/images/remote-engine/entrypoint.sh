#!/bin/sh
# A second Docker engine for prbox's tests: dockerd, reached only through sshd.
# PRBOX_HOST_KEY: the sshd host key (an OpenSSH private key, base64);
# PRBOX_AUTHORIZED_KEY: the one public key allowed in.
set -eu
: "${PRBOX_HOST_KEY:?PRBOX_HOST_KEY is required}" "${PRBOX_AUTHORIZED_KEY:?PRBOX_AUTHORIZED_KEY is required}"
install -d -m 0755 /run/sshd /etc/ssh/prbox
printf '%s\n' "$PRBOX_HOST_KEY" | base64 -d >/etc/ssh/prbox/host_ed25519_key
chmod 0600 /etc/ssh/prbox/host_ed25519_key
printf '%s\n' "$PRBOX_AUTHORIZED_KEY" >/etc/ssh/prbox/authorized_keys
chmod 0644 /etc/ssh/prbox/authorized_keys
unset PRBOX_HOST_KEY PRBOX_AUTHORIZED_KEY

# Run without --privileged (an engine whose bounding set lacks a capability
# cannot grant them all), /sys and the cgroup file systems come read-only:
# dockerd must write them to make its containers' cgroups.
if grep -q ' /sys sysfs ro' /proc/self/mounts; then mount -o remount,rw /sys; fi
awk '($3 == "cgroup" || $3 == "cgroup2") && $4 ~ /^ro/ { print $2 }' /proc/self/mounts | while read -r m; do
  mount -o remount,bind,rw "$m"
done

# cgroup v2: move this container's processes out of the root cgroup so dockerd
# can enable controllers for its own containers (what Docker's dind script does).
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  mkdir -p /sys/fs/cgroup/init
  xargs -rn1 </sys/fs/cgroup/cgroup.procs >/sys/fs/cgroup/init/cgroup.procs 2>/dev/null || :
  sed -e 's/ / +/g' -e 's/^/+/' </sys/fs/cgroup/cgroup.controllers >/sys/fs/cgroup/cgroup.subtree_control || :
fi

# Both write to the container's log; the engine is only reachable through sshd.
dockerd --host=unix:///var/run/docker.sock 2>&1 &
exec /usr/sbin/sshd -D -e -f /etc/ssh/prbox/sshd_config

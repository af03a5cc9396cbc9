/**
 * Capabilities a sandbox's container never gets from Docker's default set,
 * unless a trusted repository's configuration adds them back:
 * - MKNOD: a device node made in the workspace or the home (folders of the
 *   host's file system) would open the host's device to whoever reaches it;
 * - SETFCAP: a file capability set there is as good as a setuid bit;
 * - NET_RAW: raw sockets on the bridge every sandbox shares (another
 *   sandbox's traffic forged or read).
 * The rest of Docker's default set stays: `sudo`, `apt` and `dpkg` need
 * CHOWN, DAC_OVERRIDE, FOWNER, FSETID, SETUID and SETGID.
 */
export const DROPPED_CAPABILITIES: ReadonlyArray<string> = ["MKNOD", "NET_RAW", "SETFCAP"]

/** `cap_mknod`, `CAP_MKNOD` and `MKNOD` are one capability to Docker. */
const capabilityName = (name: string): string => name.toUpperCase().replace(/^CAP_/, "")

/** What a container drops: the set above, less what the trusted configuration adds (`ALL`: nothing). */
export const capabilitiesToDrop = (added: ReadonlyArray<string> = []): ReadonlyArray<string> => {
  const kept = new Set(added.map(capabilityName))
  return kept.has("ALL") ? [] : DROPPED_CAPABILITIES.filter((name) => !kept.has(name))
}

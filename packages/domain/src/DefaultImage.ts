/**
 * Who may build prbox's default image: debootstrap needs root on Linux. The
 * refusal names the command that would build it and the setting that avoids it.
 */
export const defaultImageRefusal = (uid: number | undefined, platform: string): string | undefined => {
  const instead = 'or set "image" in $PRBOX_HOME/config.json to an image this machine has or can pull'
  if (platform !== "linux") {
    return `prbox builds its default image on Linux only (debootstrap); on ${platform}, ${instead.slice(3)}`
  }
  if (uid !== 0) {
    return `building prbox's default image needs root (debootstrap): run \`sudo prbox image build\` once, ${instead}`
  }
  return undefined
}

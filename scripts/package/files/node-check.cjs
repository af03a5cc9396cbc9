"use strict"
// The bins' first step, in syntax every Node parses: the bundle needs Node >= 22.19,
// and an older Node must say so in one line rather than fail on the bundle's syntax.
var MINIMUM = [22, 19]

module.exports = function supported(command) {
  var parts = process.versions.node.split(".")
  var major = Number(parts[0])
  var minor = Number(parts[1])
  if (major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1])) return true
  process.stderr.write(
    command +
      ": needs Node >= " +
      MINIMUM.join(".") +
      ", this is Node " +
      process.versions.node +
      " (" +
      process.execPath +
      ")\n"
  )
  process.exitCode = 1
  return false
}

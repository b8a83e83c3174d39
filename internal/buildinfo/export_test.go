package buildinfo

import "runtime/debug"

// Resolve is resolve with the -ldflags -X values as arguments.
func Resolve(bi *debug.BuildInfo, version, revision, time, modified string) Info {
	return resolve(bi, stamp{version: version, revision: revision, time: time, modified: modified})
}

// Package buildinfo tells which build of seckill is running: the module version, the VCS
// revision with its commit time and whether the tree had uncommitted changes, and the Go
// version. cmd/api and cmd/loadtest print it for -version; cmd/api logs it at start and
// exports it as the seckill_build_info metric.
//
// go build stamps the VCS revision into a binary (runtime/debug.ReadBuildInfo) when it builds
// inside a git checkout whose .git is a directory. It stamps nothing with -buildvcs=false, in
// a tree without .git (the Docker build context: see .dockerignore), or in a linked git
// worktree, whose .git is a file (go.dev/issue/58218); and in a worktree nested in another
// repository it stamps that repository's commit. So `make build` and the Dockerfile ask git
// and pass its answer with -ldflags -X:
//
//	-X github.com/seckill/seckill/internal/buildinfo.version=v1.2.0+dirty
//	-X github.com/seckill/seckill/internal/buildinfo.revision=<full commit hash>
//	-X github.com/seckill/seckill/internal/buildinfo.revisionTime=2026-01-02T15:04:05Z
//	-X github.com/seckill/seckill/internal/buildinfo.modified=true
//
// Values passed so win over Go's own stamp; a plain go build or go install gets Go's.
package buildinfo

import (
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
)

// Set with -ldflags -X by `make build` and the Dockerfile; empty otherwise.
var (
	version      string // such as v1.2.0, or a commit for an untagged tree; "+dirty" when modified
	revision     string // the full commit hash
	revisionTime string // the commit time, RFC 3339 in UTC
	modified     string // "true" when the tree had uncommitted changes
)

// unknown is the value of a field that neither Go nor the build stamped.
const unknown = "unknown"

// Info describes one build. The zero Info describes nothing; Read returns a filled one.
type Info struct {
	// Version is the module version: a tag, a git describe or Go pseudo-version ending in
	// "+dirty" when the tree was modified, or "(devel)" when nothing better was stamped.
	Version string
	// Revision is the full VCS commit hash, or "unknown".
	Revision string
	// Time is the commit time of Revision, RFC 3339 in UTC, or "unknown".
	Time string
	// Modified reports whether the tree had uncommitted changes (untracked files count).
	Modified bool
	// GoVersion is the Go toolchain that built the binary, such as go1.26.8.
	GoVersion string
}

// Read returns the running binary's build information. It is safe for concurrent use.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(bi, stamp{version: version, revision: revision, time: revisionTime, modified: modified})
}

// stamp holds the values passed with -ldflags -X.
type stamp struct{ version, revision, time, modified string }

// resolve merges the build's stamp into what Go recorded in bi (nil when the binary has no
// build information): the stamp wins field by field where it is set.
func resolve(bi *debug.BuildInfo, s stamp) Info {
	info := Info{Version: "(devel)", Revision: unknown, Time: unknown, GoVersion: runtime.Version()}
	if bi != nil {
		info.GoVersion = bi.GoVersion
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				info.Revision = kv.Value
			case "vcs.time":
				info.Time = kv.Value
			case "vcs.modified":
				info.Modified = kv.Value == "true"
			}
		}
	}
	if s.version != "" {
		info.Version = s.version
	}
	if s.revision != "" { // revision, time and modified come from one git, together
		info.Revision, info.Time, info.Modified = s.revision, unknown, s.modified == "true"
		if s.time != "" {
			info.Time = s.time
		}
	}
	return info
}

// String formats the build on one line, as -version prints it:
//
//	v1.2.0 revision=0123abcd... time=2026-01-02T15:04:05Z modified=false go=go1.26.8
func (i Info) String() string {
	return fmt.Sprintf("%s revision=%s time=%s modified=%t go=%s", i.Version, i.Revision, i.Time, i.Modified, i.GoVersion)
}

// LogValue implements slog.LogValuer: a group of the build's fields.
func (i Info) LogValue() slog.Value {
	return slog.GroupValue(slog.String("version", i.Version), slog.String("revision", i.Revision),
		slog.String("time", i.Time), slog.Bool("modified", i.Modified), slog.String("go", i.GoVersion))
}

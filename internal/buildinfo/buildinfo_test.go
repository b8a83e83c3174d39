package buildinfo_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/seckill/seckill/internal/buildinfo"
)

func TestResolve(t *testing.T) {
	const rev, rev2 = "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98"
	goStamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20260102150405-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-01-02T15:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	unstamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	tests := []struct {
		name                              string
		bi                                *debug.BuildInfo
		version, revision, time, modified string // -ldflags -X
		want                              buildinfo.Info
	}{
		{name: "no build information", want: buildinfo.Info{Version: "(devel)", Revision: "unknown", Time: "unknown", GoVersion: runtime.Version()}},
		{name: "go build without VCS (Docker context, worktree)", bi: unstamped,
			want: buildinfo.Info{Version: "(devel)", Revision: "unknown", Time: "unknown", GoVersion: "go1.26.8"}},
		{name: "go build in a git checkout", bi: goStamped,
			want: buildinfo.Info{Version: "v0.0.0-20260102150405-0123456789ab+dirty", Revision: rev, Time: "2026-01-02T15:04:05Z", Modified: true, GoVersion: "go1.26.8"}},
		{name: "make build or the Dockerfile, Go stamped nothing", bi: unstamped,
			version: "v1.2.0", revision: rev2, time: "2026-02-03T04:05:06Z", modified: "false",
			want: buildinfo.Info{Version: "v1.2.0", Revision: rev2, Time: "2026-02-03T04:05:06Z", GoVersion: "go1.26.8"}},
		{name: "the build's stamp wins over Go's (worktree nested in another repository)", bi: goStamped,
			version: "fedcba9", revision: rev2, time: "2026-02-03T04:05:06Z", modified: "false",
			want: buildinfo.Info{Version: "fedcba9", Revision: rev2, Time: "2026-02-03T04:05:06Z", GoVersion: "go1.26.8"}},
		{name: "a stamped revision without a time", bi: goStamped, revision: rev2, modified: "true",
			want: buildinfo.Info{Version: "v0.0.0-20260102150405-0123456789ab+dirty", Revision: rev2, Time: "unknown", Modified: true, GoVersion: "go1.26.8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildinfo.Resolve(tt.bi, tt.version, tt.revision, tt.time, tt.modified); got != tt.want {
				t.Errorf("Resolve = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadAndString(t *testing.T) {
	info := buildinfo.Read()
	if got, want := info.GoVersion, runtime.Version(); got != want {
		t.Errorf("GoVersion = %q, want %q", got, want)
	}
	if info.Version == "" || info.Revision == "" || info.Time == "" {
		t.Errorf("Read = %+v, want no empty field", info)
	}
	i := buildinfo.Info{Version: "v1.2.0+dirty", Revision: "0123", Time: "2026-01-02T15:04:05Z", Modified: true, GoVersion: "go1.26.8"}
	if got, want := i.String(), "v1.2.0+dirty revision=0123 time=2026-01-02T15:04:05Z modified=true go=go1.26.8"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

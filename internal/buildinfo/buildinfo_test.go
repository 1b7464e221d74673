package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/rehost/rehost/cmd/rehost", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	for name, tc := range map[string]struct {
		version, commit string
		bi              *debug.BuildInfo
		want            string
	}{
		"release build: link-time values win":       {"v0.1.0", "0f3a9c", vcs("ffff", "true"), "v0.1.0 (commit 0f3a9c)"},
		"go install module@version":                 {"", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "v0.1.0"},
		"build in a checkout":                       {"", "", vcs("0f3a9c", "false"), "(devel) (commit 0f3a9c)"},
		"build in a modified checkout":              {"", "", vcs("0f3a9c", "true"), "(devel) (commit 0f3a9c, modified)"},
		"make build: version only, commit from VCS": {"v0.1.0-3-g0f3a9c", "", vcs("0f3a9c", "false"), "v0.1.0-3-g0f3a9c (commit 0f3a9c)"},
		"no build information":                      {"", "", nil, "(devel)"},
		"nothing recorded":                          {"", "", &debug.BuildInfo{}, "(devel)"},
	} {
		if got := fromBuildInfo(tc.version, tc.commit, tc.bi).String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
}

// TestGet: a test binary has build information; the link-time values are
// kept as given.
func TestGet(t *testing.T) {
	if got := Get("v1.2.3", "abc").String(); got != "v1.2.3 (commit abc)" {
		t.Errorf("Get = %q", got)
	}
	if got := Get("", "").Version; got == "" {
		t.Error("Get without link-time values: empty version")
	}
}

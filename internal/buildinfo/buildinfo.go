// Package buildinfo says which rehost a binary is: the version and commit
// given at link time by release builds (-ldflags "-X main.version=...
// -X main.commit=..."), else what the go command recorded in the binary:
// the module's version for `go install module@version`, the VCS revision
// for a build in a git checkout.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Info is a binary's version and commit.
type Info struct {
	Version  string // vX.Y.Z, or "(devel)" when unknown
	Commit   string // the full commit hash, or "" when unknown
	Modified bool   // built from a checkout with uncommitted changes (VCS data)
}

// Get returns the running binary's Info from the values given at link
// time (empty when not given) and its build information.
func Get(version, commit string) Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(version, commit, bi)
}

func fromBuildInfo(version, commit string, bi *debug.BuildInfo) Info {
	i := Info{Version: version, Commit: commit}
	if bi != nil {
		if i.Version == "" && bi.Main.Version != "" {
			i.Version = bi.Main.Version
		}
		if i.Commit == "" {
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					i.Commit = s.Value
				case "vcs.modified":
					i.Modified = s.Value == "true"
				}
			}
		}
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	return i
}

// String is the version, then the commit in parentheses when known:
// "v0.1.0 (commit 0f3a…)", "(devel) (commit 0f3a…, modified)", "v0.1.0".
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(i.Version)
	if i.Commit != "" {
		b.WriteString(" (commit " + i.Commit)
		if i.Modified {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	return b.String()
}

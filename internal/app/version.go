package app

import (
	"fmt"
	"runtime/debug"
)

// BuildInfo is what the binary knows about its own build: the module
// version ("(devel)" for `go run` and `go build` in a checkout), the VCS
// revision and whether the work tree had changes (both empty when the
// build had no VCS information), and the Go version.
type BuildInfo struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
}

// ReadBuildInfo returns the running binary's build information, as
// runtime/debug reports it; what the build did not record stays empty.
func ReadBuildInfo() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return BuildInfo{Version: "unknown"}
	}
	info := BuildInfo{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if info.Version == "" {
		info.Version = "unknown"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String renders the build information on one line:
// "VERSION (revision REV, modified) GOVERSION".
func (b BuildInfo) String() string {
	s := b.Version
	switch {
	case b.Revision != "" && b.Modified:
		s += fmt.Sprintf(" (revision %s, modified)", b.Revision)
	case b.Revision != "":
		s += fmt.Sprintf(" (revision %s)", b.Revision)
	}
	return s + " " + b.GoVersion
}

package depreview

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strings"

	"deps.dev/util/maven"
	"golang.org/x/text/encoding/charmap"
)

// pomParser reads the dependencies a Maven pom.xml declares, with the
// project model of deps.dev/util/maven (the one osv-scalibr's pom.xml
// extractor is built on): properties interpolated (${x}, ${project.version}),
// versions taken from the file's own dependencyManagement, the default
// profiles merged when the project names a parent. A parent or an imported
// bill of materials is another file, elsewhere: it is not fetched, so a
// dependency whose version only it gives has none.
//
// It stands in for the scalibr extractor, which reaches the parents through
// a Maven registry client and so links gRPC and Google's cloud
// authentication into every program that parses manifests.
type pomParser struct{}

// pomVersionRequirement takes a version requirement's first bound: "1.2"
// from "1.2", "[1.2,2.0)", "(,1.0]" yields "" (no lower bound).
var pomVersionRequirement = regexp.MustCompile(`[[(]?(.*?)(?:,|[)\]]|$)`)

// Parse implements Parser.
func (pomParser) Parse(_ context.Context, _ string, content []byte) ([]Dependency, error) {
	project, err := readPOM(content)
	if err != nil {
		return nil, err
	}
	deps := make([]Dependency, 0, len(project.Dependencies))
	for _, d := range project.Dependencies {
		group, artifact := strings.TrimSpace(string(d.GroupID)), strings.TrimSpace(string(d.ArtifactID))
		if group == "" || artifact == "" {
			continue
		}
		deps = append(deps, newDependency(EcosystemMaven, group+":"+artifact, pomVersion(d.Version), pomScope(d.Scope)))
	}
	return deps, nil
}

// readPOM decodes a pom.xml and resolves what the file itself can resolve:
// its properties and its dependency management.
func readPOM(content []byte) (*maven.Project, error) {
	var project maven.Project
	dec := xml.NewDecoder(bytes.NewReader(content))
	dec.CharsetReader = pomCharsetReader
	dec.Entity = xml.HTMLEntity
	if err := dec.Decode(&project); err != nil {
		return nil, err
	}
	if err := project.Interpolate(); err != nil {
		return nil, err
	}
	if p := project.Parent; p.GroupID != "" && p.ArtifactID != "" && p.Version != "" {
		if err := project.MergeProfiles("", maven.ActivationOS{}); err != nil {
			return nil, err
		}
		if err := project.Interpolate(); err != nil {
			return nil, err
		}
	}
	project.ProcessDependencies(func(_, _, _ maven.String) (maven.DependencyManagement, error) {
		return maven.DependencyManagement{}, nil // imported boms are other files
	})
	return &project, nil
}

// pomVersion is the version a requirement resolves to without a registry:
// the version itself, or a range's lower bound.
func pomVersion(v maven.String) string {
	m := pomVersionRequirement.FindStringSubmatch(strings.TrimSpace(string(v)))
	if m == nil {
		return ""
	}
	return m[1]
}

// pomScope maps Maven's scopes: compile (the default), runtime, provided,
// system and import are runtime; test is development.
func pomScope(scope maven.String) Scope {
	s := strings.TrimSpace(string(scope))
	if s == "" || s == "compile" {
		return ScopeRuntime
	}
	return scopeFromGroups([]string{s})
}

// pomCharsetReader decodes the encodings pom files are written in besides
// UTF-8: ISO-8859-1 and its Windows superset. Others are refused, which
// reports the manifest as malformed.
func pomCharsetReader(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return r, nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1":
		return charmap.ISO8859_1.NewDecoder().Reader(r), nil
	case "windows-1252", "cp1252":
		return charmap.Windows1252.NewDecoder().Reader(r), nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", label)
}

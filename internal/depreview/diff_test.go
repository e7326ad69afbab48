package depreview

import (
	"fmt"
	"slices"
	"testing"

	"forgeapi/internal/depreview/advisory"
)

func npmDep(name, version string, scope Scope) Dependency {
	return newDependency(EcosystemNPM, name, version, scope)
}

// changeLine renders a change compactly for comparison.
func changeLine(c Change) string {
	return fmt.Sprintf("%s %s %s@%s", c.Manifest, c.ChangeType, c.Name, c.Version)
}

func changeLines(changes []Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = changeLine(c)
	}
	return out
}

func TestDiff(t *testing.T) {
	t.Parallel()
	lodash4 := npmDep("lodash", "4.17.20", ScopeRuntime)
	lodash5 := npmDep("lodash", "4.17.21", ScopeRuntime)
	jest := npmDep("jest", "29.7.0", ScopeDevelopment)
	express := npmDep("express", "4.18.2", ScopeRuntime)
	tests := []struct {
		name      string
		manifests []ManifestChange
		want      []string
	}{
		{"nothing changed", []ManifestChange{{Path: "package-lock.json", Base: []Dependency{lodash4, jest}, Head: []Dependency{jest, lodash4}}}, nil},
		{"added", []ManifestChange{{Path: "package-lock.json", Base: []Dependency{jest}, Head: []Dependency{jest, express}}},
			[]string{"package-lock.json added express@4.18.2"}},
		{"removed", []ManifestChange{{Path: "package-lock.json", Base: []Dependency{jest, express}, Head: []Dependency{jest}}},
			[]string{"package-lock.json removed express@4.18.2"}},
		{"upgrade is removed then added", []ManifestChange{{Path: "package-lock.json", Base: []Dependency{lodash4, jest}, Head: []Dependency{lodash5, jest}}},
			[]string{"package-lock.json removed lodash@4.17.20", "package-lock.json added lodash@4.17.21"}},
		{"new manifest", []ManifestChange{{Path: "web/package-lock.json", Head: []Dependency{lodash5, express}}},
			[]string{"web/package-lock.json added express@4.18.2", "web/package-lock.json added lodash@4.17.21"}},
		{"deleted manifest", []ManifestChange{{Path: "web/package-lock.json", Base: []Dependency{express}}},
			[]string{"web/package-lock.json removed express@4.18.2"}},
		{"moved manifest, ordered by path", []ManifestChange{
			{Path: "new/package-lock.json", Head: []Dependency{express}},
			{Path: "old/package-lock.json", Base: []Dependency{express}},
		}, []string{"new/package-lock.json added express@4.18.2", "old/package-lock.json removed express@4.18.2"}},
		{"duplicates collapse", []ManifestChange{{Path: "p", Head: []Dependency{express, express, npmDep("express", "4.18.2", ScopeDevelopment)}}},
			[]string{"p added express@4.18.2"}},
		{"scope change alone is no change", []ManifestChange{{Path: "p", Base: []Dependency{npmDep("a", "1.0.0", ScopeDevelopment)}, Head: []Dependency{npmDep("a", "1.0.0", ScopeRuntime)}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := changeLines(Diff(tt.manifests))
			if len(got) == 0 {
				got = nil
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Diff =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

func TestDiffKeepsRuntimeScopeOfDuplicates(t *testing.T) {
	t.Parallel()
	changes := Diff([]ManifestChange{{Path: "p", Head: []Dependency{
		npmDep("a", "1.0.0", ScopeDevelopment), npmDep("a", "1.0.0", ScopeRuntime),
	}}})
	if len(changes) != 1 || changes[0].Scope != ScopeRuntime {
		t.Fatalf("changes = %+v, want one runtime item", changes)
	}
}

type fakeMatcher map[string][]advisory.Vulnerability

func (f fakeMatcher) Match(eco, name, version string) []advisory.Vulnerability {
	return f[eco+"/"+name+"@"+version]
}

func TestAttachVulnerabilities(t *testing.T) {
	t.Parallel()
	vuln := advisory.Vulnerability{Severity: "high", AdvisoryGHSAID: "GHSA-xxxx-yyyy-zzzz"}
	changes := Diff([]ManifestChange{{Path: "p",
		Base: []Dependency{npmDep("lodash", "4.17.20", ScopeRuntime)},
		Head: []Dependency{npmDep("lodash", "4.17.21", ScopeRuntime)}}})
	AttachVulnerabilities(changes, fakeMatcher{"npm/lodash@4.17.20": {vuln}})
	if len(changes[0].Vulnerabilities) != 1 || changes[0].ChangeType != ChangeRemoved {
		t.Errorf("removed item vulnerabilities = %+v", changes[0].Vulnerabilities)
	}
	if len(changes[1].Vulnerabilities) != 0 {
		t.Errorf("added item vulnerabilities = %+v", changes[1].Vulnerabilities)
	}
	var nilIndex *advisory.Index
	AttachVulnerabilities(changes, nilIndex) // must not panic
}

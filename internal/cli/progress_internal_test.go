package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Long admin operations say what they do on a terminal (c.progress is
// stderr when it is one) and nothing elsewhere.
func TestAdvisoryImportShowsProgressOnATerminal(t *testing.T) {
	t.Parallel()
	osv := t.TempDir()
	err := os.WriteFile(filepath.Join(osv, "GHSA-1.json"),
		[]byte(`{"id":"GHSA-1","summary":"s","affected":[{"package":{"ecosystem":"RubyGems","name":"rack"},"versions":["2.2.8"]}],"database_specific":{"severity":"LOW"}}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	var out, errOut, progress bytes.Buffer
	root := (&cli{stdout: &out, stderr: &errOut, progress: &progress}).command()
	root.SetArgs([]string{"advisories", "import", osv, "--data", data})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("import: %v; stderr %s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "reading advisories from "+osv) || !strings.Contains(lines[1], "read 1 advisories") {
		t.Errorf("progress %q", progress.String())
	}
	if out.String() != "imported 1 advisories: 1 added, 0 updated, 0 unchanged\n" {
		t.Errorf("stdout %q", out.String())
	}
	if terminal(&out) != nil {
		t.Error("a buffer counts as a terminal")
	}
}

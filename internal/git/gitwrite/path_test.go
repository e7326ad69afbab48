package gitwrite_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"forgeapi/internal/git/gitwrite"
)

// TestCheckPath: the paths the contents API refuses, and that every path
// it accepts is one go-git reads back (object.Tree.FindEntry refuses to
// look up the paths it would not check out).
func TestCheckPath(t *testing.T) {
	t.Parallel()
	accepted := []string{"README.md", "docs/guide.md", "a b/c", "é/🙂.txt", "x..y", ".github/workflows/ci.yml",
		".gitignore", ".gitmodules", "a.git", "git~2", "👨\u200d👩\u200d👧.txt", "C:x", "a:b", "-rf", "...a", "a."}
	refused := []string{"", "/", "a//b", "a/", "/a", ".", "..", "a/../b", "./a", "...", ". .", ".. ", "\u200c..",
		".git", ".GIT", "a/.Git/b", "git~1", "GIT~1/x", ".git.", ".git ", ".git::$INDEX_ALLOCATION", ".g\u200cit", "\ufeff.git",
		`a\b`, `..\..\pwn3`, `C:\x`, "a\tb", "a\nb", "a\rb", "a\x00b", "a\x7fb", "a\u0085b", "a\xffb"}
	for _, p := range accepted {
		if err := gitwrite.CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v, want nil", p, err)
		}
		if _, err := (&object.Tree{}).FindEntry(p); !errors.Is(err, object.ErrEntryNotFound) && !errors.Is(err, object.ErrDirectoryNotFound) {
			t.Errorf("go-git refuses %q, which CheckPath accepts: %v", p, err)
		}
	}
	for _, p := range refused {
		err := gitwrite.CheckPath(p)
		if _, ok := errors.AsType[*gitwrite.Refusal](err); !ok {
			t.Errorf("CheckPath(%q) = %v, want a refusal", p, err)
		}
	}
	for name, want := range map[string]bool{".gitmodules": true, ".GITMODULES": true, "gitmod~1": true, ".gitmodules .": true,
		".git\u200cmodules": true, "gitmodules": false, ".gitmodules.bak": false} {
		if got := gitwrite.IsGitmodules(name); got != want {
			t.Errorf("IsGitmodules(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestCheckGitmodules: what git's fsck refuses in a .gitmodules; whether
// a file parses is checked against git's own parser.
func TestCheckGitmodules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		content string
		ok      bool
	}{
		{"[submodule \"lib\"]\n\tpath = lib\n\turl = https://git.example/lib.git\n", true},
		{"# comment\n[submodule \"a b\"]\n\tpath = a b ; trailing\n\turl = ../lib.git\n\tbranch = main\n", true},
		{"[submodule \"lib\"]\n\tpath = lib\n\tupdate = rebase\n", true},
		{"", true},
		{"[core]\n\tbare\n", true},
		{"[submodule \"lib\"\n\tpath = lib\n", false},
		{"path = lib\n", true}, // git reads it as a variable "path"
		{"not a config file at all\n", false},
		{"[submodule \"../../x\"]\n\tpath = x\n", false},
		{"[submodule \"a\\\\..\\\\b\"]\n\tpath = x\n", false},
		{"[submodule \"lib\"]\n\turl = -u./payload\n", false},
		{"[submodule \"lib\"]\n\turl = ./%0aevil\n", false},
		{"[submodule \"lib\"]\n\tpath = --recurse\n", false},
		{"[submodule \"lib\"]\n\tupdate = !rm -rf /\n", false},
	} {
		if err := gitwrite.CheckGitmodules([]byte(tc.content)); (err == nil) != tc.ok {
			t.Errorf("CheckGitmodules(%q) = %v, want ok %v", tc.content, err, tc.ok)
		}
	}
	// Whether a file parses, as git's own parser says.
	for _, content := range []string{
		"path = lib\n", "[a]\nk_y = 1\n", "[a]\n1key = x\n", "[a \"b\"]\nk = \"unterminated\n", "[a]\nk = x \\\n y\n",
		"[a]\nk = \"q\\tq\"\n", "[a]\nk = \\q\n", "[a.b]\nk=1\n", "[a \"b\\\"c\"]\nk=1\n", "\xef\xbb\xbf[a]\nk=1\n",
		"\xef\xbb[a]\nk=1\n", "[a]k=1\n", "[a] ; c\nk=1 # c\n", "[]\nk=1\n", "[a]\n=1\n", "[a]\nk\n", "[a\"b\"]\nk=1\n",
		"[A]\nK=1\n", "[a]\r\nk=1\r\n", "[a]\nk=\x00\n", "[a \"b\"\n", "[a \"b\" ]\n", "[a  \"b\"]\nk = 1", "[a]\nk = \"x\" y ; z\n",
		"[a]\nk = a\rb\n", "[a\n", "[a-b]\nx-y=1\n", "[a]\n\tk\t=\t1\t\n",
	} {
		err := gitwrite.CheckGitmodules([]byte(content))
		parses := err == nil || !strings.Contains(err.Error(), "does not parse")
		if git := gitParses(t, content); parses != git {
			t.Errorf("CheckGitmodules(%q) parses: %v, git's parser: %v", content, parses, git)
		}
	}
}

// gitParses reports whether `git config --list` reads content as a
// configuration file.
func gitParses(t *testing.T, content string) bool {
	file := filepath.Join(t.TempDir(), "gitmodules")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "--file", file, "--list")
	cmd.Env = []string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
	return cmd.Run() == nil
}

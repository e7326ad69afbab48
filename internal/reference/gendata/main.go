// Command gendata copies the reference tables forgeapi serves from
// checkouts of the repositories the platform takes them from, into
// internal/reference/data:
//
//	go run ./internal/reference/gendata -choosealicense DIR -gitignore DIR -gemoji DIR
//
// github/choosealicense.com's _licenses/*.txt (front matter and text,
// as is), github/gitignore's top-level templates (as is), and
// github/gemoji's db/emoji.json reduced to one "alias<TAB>image" line an
// alias. The commit of each checkout goes into data/SOURCES.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	licenses := flag.String("choosealicense", "", "checkout of github/choosealicense.com")
	gitignore := flag.String("gitignore", "", "checkout of github/gitignore")
	gemoji := flag.String("gemoji", "", "checkout of github/gemoji")
	out := flag.String("out", "internal/reference/data", "the data directory")
	flag.Parse()
	if *licenses == "" || *gitignore == "" || *gemoji == "" {
		flag.Usage()
		os.Exit(2)
	}
	must(replaceDir(filepath.Join(*out, "licenses"), filepath.Join(*licenses, "_licenses"), ".txt"))
	must(replaceDir(filepath.Join(*out, "gitignore"), *gitignore, ".gitignore"))
	must(writeEmojis(filepath.Join(*out, "emojis.tsv"), filepath.Join(*gemoji, "db", "emoji.json")))
	sources := fmt.Sprintf("github/choosealicense.com %s\ngithub/gitignore %s\ngithub/gemoji %s\n",
		commit(*licenses), commit(*gitignore), commit(*gemoji))
	must(os.WriteFile(filepath.Join(*out, "SOURCES"), []byte(sources), 0o644))
}

// replaceDir makes dst hold the files of src (not its subdirectories)
// whose names end in ext.
func replaceDir(dst, src, ext string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeEmojis writes one line an alias: the alias and the name of the
// emoji's image, its code points in hex without variation selectors
// (1f44d for +1, 1f1fa-1f1f8 for us), as the platform names them.
func writeEmojis(dst, src string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var list []struct {
		Emoji   string   `json:"emoji"`
		Aliases []string `json:"aliases"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	var lines []string
	for _, e := range list {
		var points []string
		for _, r := range e.Emoji {
			if r != 0xfe0f {
				points = append(points, fmt.Sprintf("%04x", r))
			}
		}
		for _, alias := range e.Aliases {
			lines = append(lines, alias+"\t"+strings.Join(points, "-"))
		}
	}
	slices.Sort(lines)
	return os.WriteFile(dst, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func commit(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "(not a git checkout)"
	}
	return strings.TrimSpace(string(out))
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

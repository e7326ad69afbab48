// Command gendata copies the reference tables forgeapi serves from
// checkouts of the repositories the platform takes them from, into
// internal/reference/data:
//
//	go run ./internal/reference/gendata [-choosealicense DIR] [-gitignore DIR] [-gemoji DIR] \
//		[-contributor-covenant DIR] [-citizen DIR]
//
// github/choosealicense.com's _licenses/*.txt (front matter and text,
// as is), github/gitignore's top-level templates (as is),
// github/gemoji's db/emoji.json reduced to one "alias<TAB>image" line an
// alias, and the two codes of conduct the platform offers: version 2.0
// of EthicalSource/contributor_covenant (its Hugo front matter dropped)
// and stumpsyn/policies' citizen_code_of_conduct.md, each under a front
// matter of the platform's name and html_url for it. Only the tables
// whose checkouts are given are replaced; the commit of each checkout
// goes into its line of data/SOURCES.
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
	covenant := flag.String("contributor-covenant", "", "checkout of EthicalSource/contributor_covenant")
	citizen := flag.String("citizen", "", "checkout of stumpsyn/policies")
	out := flag.String("out", "internal/reference/data", "the data directory")
	flag.Parse()
	if *licenses+*gitignore+*gemoji+*covenant+*citizen == "" {
		flag.Usage()
		os.Exit(2)
	}
	sources := readSources(filepath.Join(*out, "SOURCES"))
	if *licenses != "" {
		must(replaceDir(filepath.Join(*out, "licenses"), filepath.Join(*licenses, "_licenses"), ".txt"))
		sources["github/choosealicense.com"] = commit(*licenses)
	}
	if *gitignore != "" {
		must(replaceDir(filepath.Join(*out, "gitignore"), *gitignore, ".gitignore"))
		sources["github/gitignore"] = commit(*gitignore)
	}
	if *gemoji != "" {
		must(writeEmojis(filepath.Join(*out, "emojis.tsv"), filepath.Join(*gemoji, "db", "emoji.json")))
		sources["github/gemoji"] = commit(*gemoji)
	}
	if *covenant != "" {
		must(writeCodeOfConduct(filepath.Join(*out, "codes_of_conduct", "contributor_covenant.md"),
			filepath.Join(*covenant, "content", "version", "2", "0", "code_of_conduct.md"),
			"Contributor Covenant", "https://www.contributor-covenant.org/version/2/0/code_of_conduct/"))
		sources["EthicalSource/contributor_covenant"] = commit(*covenant)
	}
	if *citizen != "" {
		must(writeCodeOfConduct(filepath.Join(*out, "codes_of_conduct", "citizen_code_of_conduct.md"),
			filepath.Join(*citizen, "citizen_code_of_conduct.md"),
			"Citizen Code of Conduct", "http://citizencodeofconduct.org/"))
		sources["stumpsyn/policies"] = commit(*citizen)
	}
	must(writeSources(filepath.Join(*out, "SOURCES"), sources))
}

// readSources reads data/SOURCES: one "repository commit" line a source.
func readSources(file string) map[string]string {
	m := map[string]string{}
	raw, err := os.ReadFile(file)
	if err != nil {
		return m
	}
	for line := range strings.Lines(string(raw)) {
		if repo, c, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			m[repo] = c
		}
	}
	return m
}

// writeSources writes data/SOURCES, its lines sorted.
func writeSources(file string, sources map[string]string) error {
	var lines []string
	for repo, c := range sources {
		lines = append(lines, repo+" "+c+"\n")
	}
	slices.Sort(lines)
	return os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644)
}

// writeCodeOfConduct writes a code of conduct: a front matter of its
// name and html_url, then the text of src without a Hugo front matter
// ("+++" lines) of its own.
func writeCodeOfConduct(dst, src, name, htmlURL string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	text := string(raw)
	if rest, ok := strings.CutPrefix(text, "+++\n"); ok {
		if _, body, ok := strings.Cut(rest, "\n+++\n"); ok {
			text = strings.TrimLeft(body, "\n")
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	front := fmt.Sprintf("---\nname: %s\nhtml_url: %s\n---\n", name, htmlURL)
	return os.WriteFile(dst, []byte(front+text), 0o644)
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

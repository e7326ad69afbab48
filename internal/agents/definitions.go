package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sync"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
)

// Agent is one custom agent definition: agents/<file>.md on the default
// branch of the source repository.
type Agent struct {
	Name     string // front matter name, else the file name without .md
	FilePath string // agents/<file>.md
	FileName string // <file>.md
}

// maxAgentFileBytes bounds the definition files that are read for their
// front matter; a larger file is named by its file name.
const maxAgentFileBytes = 1 << 20

// maxSettingsBytes bounds the client settings file.
const maxSettingsBytes = 1 << 20

// Definitions lists the agent definitions on the default branch of the
// repository, sorted by file name: the regular files agents/*.md (not
// symbolic links, not files in subdirectories). Only the files of the page
// are read; total counts them all. A repository without commits, without
// its default branch or without an agents directory has none.
func (s *Service) Definitions(ctx context.Context, repo *repos.Repository, offset, limit int) (page []Agent, total int, err error) {
	g, err := gitread.Open(s.Repos.GitDir(repo.ID))
	if err != nil {
		return nil, 0, err
	}
	defer g.Close()
	commit, err := g.Resolve("refs/heads/" + repo.DefaultBranch)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	files, err := definitionFiles(g, commit)
	if err != nil {
		return nil, 0, err
	}
	start := min(offset, len(files))
	end := min(start+limit, len(files))
	for _, f := range files[start:end] {
		declared, err := s.declaredName(g, f)
		if err != nil {
			return nil, 0, err
		}
		page = append(page, Agent{FilePath: f.Path, FileName: f.Name, Name: nameOr(declared, f.Name)})
	}
	return page, len(files), ctx.Err()
}

// declaredName is the front matter name of a definition file ("" when it
// declares none or is too large to read), read once per file content: the
// answer is cached by blob SHA, since a blob's content never changes.
func (s *Service) declaredName(g *gitread.Repository, f gitread.Entry) (string, error) {
	if f.Size > maxAgentFileBytes {
		return "", nil
	}
	if name, ok := s.names.get(f.SHA); ok {
		return name, nil
	}
	content, err := g.ReadBlob(f.SHA)
	if err != nil {
		return "", err
	}
	name := frontMatterName(content)
	s.names.put(f.SHA, name)
	return name, nil
}

// maxCachedNames bounds the name cache; when full it starts afresh.
const maxCachedNames = 1 << 14

// nameCache maps blob SHAs to the front matter names of their contents.
// Its zero value is ready to use.
type nameCache struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *nameCache) get(sha string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name, ok := c.m[sha]
	return name, ok
}

func (c *nameCache) put(sha, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedNames {
		c.m = make(map[string]string)
	}
	c.m[sha] = name
}

// definitionFiles lists the regular files agents/*.md at the commit.
func definitionFiles(g *gitread.Repository, commit string) ([]gitread.Entry, error) {
	entries, err := g.ListDir(commit, AgentsDir)
	if errors.Is(err, gitread.ErrPathNotFound) || errors.Is(err, gitread.ErrNotADirectory) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []gitread.Entry
	for _, e := range entries {
		if ok, _ := path.Match("*.md", e.Name); ok && e.Type == gitread.EntryFile {
			files = append(files, e)
		}
	}
	return files, nil
}

// ClientSettings returns the assistant's client settings file of the
// repository's default branch, or nil when there is none (no file, no
// commits). A settings file that is not a regular file holding a JSON
// object of at most 1 MiB is a 422 that says what is wrong.
func (s *Service) ClientSettings(ctx context.Context, repo *repos.Repository) (json.RawMessage, error) {
	g, err := gitread.Open(s.Repos.GitDir(repo.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	commit, err := g.Resolve("refs/heads/" + repo.DefaultBranch)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entry, err := settingsEntry(g, commit)
	if entry == nil || err != nil {
		return nil, err
	}
	invalid := func(format string, args ...any) error {
		return invalidSource("The client settings file %s in %s %s.",
			SettingsPath, repo.FullName(), fmt.Sprintf(format, args...))
	}
	switch {
	case entry.Type != gitread.EntryFile:
		return nil, invalid("is not a regular file")
	case entry.Size > maxSettingsBytes:
		return nil, invalid("is larger than %d bytes", maxSettingsBytes)
	}
	content, err := g.ReadFile(commit, SettingsPath)
	if err != nil {
		return nil, err
	}
	if problem := jsonObjectProblem(content); problem != "" {
		return nil, invalid("is not valid: %s", problem)
	}
	return json.RawMessage(content), ctx.Err()
}

// settingsEntry finds the settings file's directory entry, nil when absent.
func settingsEntry(g *gitread.Repository, commit string) (*gitread.Entry, error) {
	entries, err := g.ListDir(commit, path.Dir(SettingsPath))
	if errors.Is(err, gitread.ErrPathNotFound) || errors.Is(err, gitread.ErrNotADirectory) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name == path.Base(SettingsPath) {
			return &e, nil
		}
	}
	return nil, nil
}

// jsonObjectProblem says why content is not one JSON object ("" when it is).
func jsonObjectProblem(content []byte) string {
	var v any
	if err := json.Unmarshal(content, &v); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			line, col := position(content, syntax.Offset)
			return fmt.Sprintf("%s (line %d, column %d)", syntax.Error(), line, col)
		}
		return "it is not JSON"
	}
	if _, ok := v.(map[string]any); !ok {
		return "the top-level value is not a JSON object"
	}
	return ""
}

// position turns a byte offset into 1-based line and column numbers.
func position(content []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < offset-1 && i < int64(len(content)); i++ {
		if content[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

package repostats

import (
	"context"

	"github.com/go-enry/go-enry/v2"

	"forgeapi/internal/git/gitread"
)

// The bounds of a language count: at most maxTreeEntries entries of the
// tree are looked at, and a file's content (for ambiguous extensions and
// generated-file markers) is read only up to maxContentRead bytes.
const (
	maxTreeEntries = 200000
	maxContentRead = 256 << 10
)

// CountLanguages is the number of bytes of each language in the tree of
// commit head, as linguist counts them (go-enry is its port): vendored,
// documentation, dot and generated files, binaries, symlinks and
// submodules count for nothing, nor do languages of the data and prose
// types; a language of a group counts for its group (TSX for TypeScript).
func CountLanguages(ctx context.Context, g *gitread.Repository, head string) (map[string]int64, error) {
	_, entries, _, err := g.Tree(head, true, maxTreeEntries)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.Type != "blob" || e.Mode == "120000" || e.Size == 0 {
			continue
		}
		lang, err := languageOf(g, e)
		if err != nil {
			return nil, err
		}
		if lang != "" {
			out[lang] += e.Size
		}
	}
	return out, nil
}

// languageOf is the language a file counts for, "" for none.
func languageOf(g *gitread.Repository, e gitread.TreeEntry) (string, error) {
	if enry.IsVendor(e.Path) || enry.IsDocumentation(e.Path) || enry.IsDotFile(e.Path) || enry.IsImage(e.Path) {
		return "", nil
	}
	var content []byte
	if e.Size <= maxContentRead {
		data, err := g.ReadBlob(e.SHA)
		if err != nil {
			return "", err
		}
		if enry.IsBinary(data) || enry.IsGenerated(e.Path, data) {
			return "", nil
		}
		content = data
	} else if enry.IsGenerated(e.Path, nil) {
		return "", nil
	}
	lang := enry.GetLanguage(e.Path, content)
	if lang == "" {
		return "", nil
	}
	if t := enry.GetLanguageType(lang); t != enry.Programming && t != enry.Markup {
		return "", nil
	}
	if group := enry.GetLanguageGroup(lang); group != "" {
		lang = group
	}
	return lang, nil
}

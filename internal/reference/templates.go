package reference

import "strings"

// Templates serves the tables' texts that a new repository's initial
// commit takes (repos.Templates): .gitignore templates and license texts.
type Templates struct{}

// Gitignore returns the .gitignore template of the name (any case); ok is
// false when there is none.
func (Templates) Gitignore(name string) (source string, ok bool, err error) {
	t, err := Load()
	if err != nil {
		return "", false, err
	}
	_, source, ok = t.gitignoreByName(name)
	return source, ok, nil
}

// License returns the text of the license of the key (any case), with
// its [year] and [fullname] placeholders; ok is false when there is none.
func (Templates) License(key string) (text string, ok bool, err error) {
	t, err := Load()
	if err != nil {
		return "", false, err
	}
	l := t.License(key)
	if l == nil {
		return "", false, nil
	}
	return strings.TrimLeft(l.Body, "\n"), true, nil
}

// gitignoreByName returns the template of the name, matched exactly or
// else in any case, with its own name.
func (t *Tables) gitignoreByName(name string) (string, string, bool) {
	if source, ok := t.Gitignore[name]; ok {
		return name, source, true
	}
	for n, s := range t.Gitignore {
		if strings.EqualFold(n, name) {
			return n, s, true
		}
	}
	return "", "", false
}

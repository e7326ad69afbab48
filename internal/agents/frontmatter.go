package agents

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxFrontMatterBytes bounds the YAML block that is parsed; a longer front
// matter is ignored (the file name names the agent).
const maxFrontMatterBytes = 64 << 10

// agentName is the name of the agent that a definition file defines: the
// `name` of its front matter when it has one, else the file name without
// ".md" (the whole file name when that leaves nothing).
func agentName(fileName string, content []byte) string {
	return nameOr(frontMatterName(content), fileName)
}

// nameOr is the declared name, or when it is "" the file name without
// ".md" (the whole file name when that leaves nothing).
func nameOr(declared, fileName string) string {
	if declared != "" {
		return declared
	}
	if stem := strings.TrimSuffix(fileName, ".md"); stem != "" {
		return stem
	}
	return fileName
}

// frontMatterName returns the trimmed value of the top-level `name` key of
// the YAML front matter that opens content: a block between a first line
// "---" and the next line "---" (or "..."), after an optional byte order
// mark, with LF or CRLF line ends. When the block is not valid YAML (an
// unquoted colon in a description is a common slip), a top-level
// one-line `name: value` in it still counts. It returns "" when there is
// no front matter, when it is not closed or too large, or when its name
// is absent, null, empty or not a scalar. It never panics.
func frontMatterName(content []byte) string {
	block, ok := frontMatter(content)
	if !ok {
		return ""
	}
	if doc, ok := parseYAML(block); ok {
		return scalarOf(mappingValue(doc, "name"))
	}
	for _, line := range bytes.Split(block, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("name:")) {
			continue
		}
		if doc, ok := parseYAML(line); ok {
			return scalarOf(mappingValue(doc, "name"))
		}
		return ""
	}
	return ""
}

// parseYAML parses one YAML document and returns its root node. The input
// is whatever was pushed: a parser panic counts as a parse failure.
func parseYAML(b []byte) (root *yaml.Node, ok bool) {
	defer func() {
		if recover() != nil {
			root, ok = nil, false
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, true
	}
	return doc.Content[0], true
}

// frontMatter cuts the YAML block out of content, reporting whether there
// is a complete one.
func frontMatter(content []byte) ([]byte, bool) {
	content = bytes.TrimPrefix(content, []byte("\uFEFF"))
	first, rest, ok := cutLine(content)
	if !ok || !isMarker(first, "---") {
		return nil, false
	}
	var block []byte
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = cutLine(rest)
		if isMarker(line, "---") || isMarker(line, "...") {
			return block, true
		}
		if len(block)+len(line) > maxFrontMatterBytes {
			return nil, false
		}
		block = append(append(block, line...), '\n')
	}
	return nil, false
}

// cutLine splits off the first line of b without its LF or CRLF end;
// found reports whether b had any line at all.
func cutLine(b []byte) (line, rest []byte, found bool) {
	if len(b) == 0 {
		return nil, nil, false
	}
	line, rest, _ = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, true
}

// isMarker reports whether line is the marker, allowing trailing blanks.
func isMarker(line []byte, marker string) bool {
	return string(bytes.TrimRight(line, " \t")) == marker
}

// mappingValue returns the value of key in a YAML mapping node, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalarOf returns the trimmed text of a non-null scalar node (following
// one alias), or "".
func scalarOf(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return strings.TrimSpace(n.Value)
}

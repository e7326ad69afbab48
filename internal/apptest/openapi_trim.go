package apptest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"forgeapi/internal/app"
	"forgeapi/internal/testcache"
)

// The platform's descriptions are 11 to 14 MB each, and kin-openapi takes
// about a second of CPU to load even a trimmed one, in every test binary:
// most of a small test binary's run. The validator loads split copies
// instead, made once per machine and kept in the user's cache directory
// under a name that is a digest of the source and of what is kept. A split
// copy is a folder of small documents, each loaded the first time an
// exchange needs it, and an index of them (index.json):
//
//   - the operations part: one document per path that forgeapi's route
//     table serves for one of its methods at least, with every method the
//     platform has on it and the components it references; the index
//     lists each path with its methods. A request to a path forgeapi does
//     not serve is answered with the JSON 404, which Check verifies as it
//     does for a path no description has;
//   - the webhooks part: one document per webhook-<event>[-<action>]
//     schema with what it references; the index maps each schema's name
//     to its document.
//
// Both drop what validation never reads: descriptions, summaries,
// examples, tags and external docs (but not a schema property that has
// one of those names).

// trimVersion changes when the trimming does, so that no cached copy
// made by an earlier rule is used.
const trimVersion = "4"

// trimmedPart is what a trimmed copy keeps.
type trimmedPart string

const (
	operationsPart trimmedPart = "operations"
	webhooksPart   trimmedPart = "webhooks"
)

// indexFile is the name of a split copy's index.
const indexFile = "index.json"

// pieceIndex is a split copy's index: its paths (operations part) or its
// schemas (webhooks part), and the document of each.
type pieceIndex struct {
	Paths   []indexedPath     `json:"paths,omitempty"`
	Schemas map[string]string `json:"schemas,omitempty"` // name: document
}

// indexedPath is one path of the operations part: its template, the
// methods the platform has on it (upper case) and its document.
type indexedPath struct {
	Path    string   `json:"path"`
	Methods []string `json:"methods"`
	File    string   `json:"file"`
}

// trimmed returns the folder of the split copy of the part of the
// description src, making it when the cache has none.
func trimmed(src string, part trimmedPart) (string, error) {
	raw, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	routes := routeTable()
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", trimVersion, part, strings.Join(routes, "\n"))
	h.Write(raw)
	name := fmt.Sprintf("%s.%s.%s", strings.TrimSuffix(filepath.Base(src), ".json"), part, hex.EncodeToString(h.Sum(nil))[:16])
	return testcache.Dir("openapi", name, func(tmp string) error {
		files, err := splitDescription(raw, part, servedBy(routes))
		if err != nil {
			return fmt.Errorf("split %s: %w", src, err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}

// routeTable is forgeapi's route table as its mux registers it, one
// "METHOD pattern" a line, in the platform's names (platformPath).
var routeTable = sync.OnceValue(func() []string {
	var out []string
	for _, r := range app.RouteTable() {
		out = append(out, r.Method+" "+platformPath(r.Pattern))
	}
	slices.Sort(out)
	return slices.Compact(out)
})

// servedBy returns whether forgeapi's mux routes a request with the
// method to the description's path (its parameters filled with a
// sample value): asked of the mux itself, because forgeapi's patterns
// are not the platform's ("/issues/{comments}/{comment_id}" serves
// "/issues/events/{event_id}" too).
func servedBy(patterns []string) func(method, path string) bool {
	mux := http.NewServeMux()
	for _, p := range patterns {
		mux.Handle(p, http.NotFoundHandler())
	}
	return func(method, path string) bool {
		req, err := http.NewRequest(method, "http://forgeapi"+pathParam.ReplaceAllString(path, "sample1"), nil)
		if err != nil {
			return false
		}
		_, pattern := mux.Handler(req)
		return pattern != ""
	}
}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// operationMethods are the keys of a path item that are operations.
var operationMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// splitDescription makes the documents of the part of the description
// raw and their index, by file name.
func splitDescription(raw []byte, part trimmedPart, served func(method, path string) bool) (map[string][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers stay as written
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	delete(doc, "x-webhooks")
	dropDocumentation(doc, false)
	graph := refGraph{doc: doc, direct: map[string][]string{}}
	files := map[string][]byte{}
	add := func(paths map[string]any, root any) (string, error) {
		name := fmt.Sprintf("d%04d.json", len(files))
		data, err := json.Marshal(graph.document(paths, root))
		files[name] = data
		return name, err
	}
	var index pieceIndex
	switch part {
	case operationsPart:
		paths, _ := doc["paths"].(map[string]any)
		for _, p := range slices.Sorted(maps.Keys(paths)) {
			ops, _ := paths[p].(map[string]any)
			methods := servedMethods(p, ops, served)
			if methods == nil {
				continue
			}
			file, err := add(map[string]any{p: ops}, ops)
			if err != nil {
				return nil, err
			}
			index.Paths = append(index.Paths, indexedPath{Path: p, Methods: methods, File: file})
		}
	case webhooksPart:
		schemas, _ := component(doc, "schemas")
		index.Schemas = map[string]string{}
		for _, name := range slices.Sorted(maps.Keys(schemas)) {
			if !strings.HasPrefix(name, "webhook-") {
				continue
			}
			file, err := add(map[string]any{}, map[string]any{"$ref": "#/components/schemas/" + name})
			if err != nil {
				return nil, err
			}
			index.Schemas[name] = file
		}
	}
	data, err := json.Marshal(index)
	files[indexFile] = data
	return files, err
}

// servedMethods returns the methods (upper case) of the path item ops at
// the path p when forgeapi serves one of them at least, and nil when it
// serves none.
func servedMethods(p string, ops map[string]any, served func(method, path string) bool) []string {
	var methods []string
	servesOne := false
	for _, m := range operationMethods {
		if _, ok := ops[m]; ok {
			methods = append(methods, strings.ToUpper(m))
			servesOne = servesOne || served(strings.ToUpper(m), p)
		}
	}
	if !servesOne {
		return nil
	}
	return methods
}

// component returns the components section of doc named section.
func component(doc map[string]any, section string) (map[string]any, bool) {
	comps, _ := doc["components"].(map[string]any)
	m, ok := comps[section].(map[string]any)
	return m, ok
}

// refGraph is the graph of a description's references: which components
// each component references directly, worked out once a component.
type refGraph struct {
	doc    map[string]any
	direct map[string][]string // "#/components/<section>/<name>": its references
}

// document returns a document of the description with the paths and the
// components that root references, directly or through other components;
// the description's other top-level keys (openapi, info) are kept.
func (g refGraph) document(paths map[string]any, root any) map[string]any {
	keep := map[string]bool{}
	var visit func(ref string)
	visit = func(ref string) {
		if keep[ref] {
			return
		}
		keep[ref] = true
		for _, r := range g.referencesOf(ref) {
			visit(r)
		}
	}
	for _, r := range directRefs(root, nil) {
		visit(r)
	}
	out := map[string]any{}
	for k, v := range g.doc {
		out[k] = v
	}
	out["paths"] = paths
	comps := map[string]any{}
	for section, entries := range g.doc["components"].(map[string]any) {
		m, _ := entries.(map[string]any)
		kept := map[string]any{}
		for name, v := range m {
			if keep["#/components/"+section+"/"+name] {
				kept[name] = v
			}
		}
		if len(kept) > 0 {
			comps[section] = kept
		}
	}
	out["components"] = comps
	return out
}

// referencesOf returns the references of the component ref.
func (g refGraph) referencesOf(ref string) []string {
	if refs, ok := g.direct[ref]; ok {
		return refs
	}
	var target any
	if section, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/"); ok {
		if m, ok := component(g.doc, section); ok {
			target = m[name]
		}
	}
	refs := directRefs(target, nil)
	g.direct[ref] = refs
	return refs
}

// directRefs appends to refs the references ($ref) written inside v.
func directRefs(v any, refs []string) []string {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			refs = append(refs, ref)
		}
		for _, child := range v {
			refs = directRefs(child, refs)
		}
	case []any:
		for _, child := range v {
			refs = directRefs(child, refs)
		}
	}
	return refs
}

// documentation are the keys validation never reads.
var documentation = map[string]bool{"description": true, "summary": true, "example": true, "examples": true,
	"externalDocs": true, "tags": true}

// nameMaps are the keys whose object maps names to definitions (a
// schema's properties, a response's headers...): its keys are names, a
// property called "description" among them, never documentation.
var nameMaps = map[string]bool{"properties": true, "patternProperties": true, "schemas": true, "parameters": true,
	"responses": true, "headers": true, "content": true, "paths": true, "requestBodies": true, "securitySchemes": true,
	"mapping": true, "links": true, "callbacks": true, "variables": true, "encoding": true}

// dropDocumentation removes the documentation keys from v; names says
// that v's keys are names (v is a name map).
func dropDocumentation(v any, names bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if !names && documentation[k] {
				delete(v, k)
				continue
			}
			_, isMap := child.(map[string]any)
			v[k] = dropDocumentation(child, !names && nameMaps[k] && isMap)
		}
	case []any:
		for i, child := range v {
			v[i] = dropDocumentation(child, false)
		}
	}
	return v
}

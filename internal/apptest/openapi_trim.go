package apptest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"forgeapi/internal/app"
)

// The platform's descriptions are 11 to 14 MB each, and kin-openapi takes
// seconds of CPU to load one, in every test binary: most of the suite's
// validation cost. The validator loads trimmed copies instead, made once
// per machine and kept in the user's cache directory under a name that is
// a digest of the source and of what is kept:
//
//   - an operations copy: the paths that forgeapi's route table serves
//     for one of their methods at least, with every method the platform
//     has on them, and the components they reference. A request to a path forgeapi
//     does not serve is answered with the JSON 404, which Check verifies
//     as it does for a path no description has;
//   - a webhooks copy (the hosted description only): the
//     webhook-<event>[-<action>] schemas and what they reference.
//
// Both drop what validation never reads: descriptions, summaries,
// examples, tags and external docs (but not a schema property that has
// one of those names).

// trimVersion changes when the trimming does, so that no cached copy
// made by an earlier rule is used.
const trimVersion = "3"

// trimmedPart is what a trimmed copy keeps.
type trimmedPart string

const (
	operationsPart trimmedPart = "operations"
	webhooksPart   trimmedPart = "webhooks"
)

// trimmed returns the file of the part of the description src, making it
// when the cache has none.
func trimmed(src string, part trimmedPart) (string, error) {
	raw, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	routes := routeTable()
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", trimVersion, part, strings.Join(routes, "\n"))
	h.Write(raw)
	name := fmt.Sprintf("%s.%s.%s.json", strings.TrimSuffix(filepath.Base(src), ".json"), part, hex.EncodeToString(h.Sum(nil))[:16])
	return cachedFile("openapi", name, func(tmp string) error {
		out, err := trimDescription(raw, part, servedBy(routes))
		if err != nil {
			return fmt.Errorf("trim %s: %w", src, err)
		}
		return os.WriteFile(tmp, out, 0o644)
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

// trimDescription makes the part of the description raw.
func trimDescription(raw []byte, part trimmedPart, served func(method, path string) bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers stay as written
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	delete(doc, "x-webhooks")
	paths, _ := doc["paths"].(map[string]any)
	kept := map[string]any{}
	var roots []any
	switch part {
	case operationsPart:
		for p, item := range paths {
			ops, _ := item.(map[string]any)
			for _, m := range operationMethods {
				if _, ok := ops[m]; ok && served(strings.ToUpper(m), p) {
					kept[p] = item
					break
				}
			}
		}
		roots = append(roots, kept)
	case webhooksPart:
		schemas, _ := component(doc, "schemas")
		for name := range schemas {
			if strings.HasPrefix(name, "webhook-") {
				roots = append(roots, map[string]any{"$ref": "#/components/schemas/" + name})
			}
		}
	}
	doc["paths"] = kept
	keepReferenced(doc, roots)
	return json.Marshal(dropDocumentation(doc, false))
}

// component returns the components section of doc named section.
func component(doc map[string]any, section string) (map[string]any, bool) {
	comps, _ := doc["components"].(map[string]any)
	m, ok := comps[section].(map[string]any)
	return m, ok
}

// keepReferenced leaves in doc's components only what roots reference,
// directly or through other components.
func keepReferenced(doc map[string]any, roots []any) {
	keep := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok && !keep[ref] {
				keep[ref] = true
				parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
				if len(parts) == 2 {
					if section, ok := component(doc, parts[0]); ok {
						walk(section[parts[1]])
					}
				}
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	comps, _ := doc["components"].(map[string]any)
	for section, entries := range comps {
		m, ok := entries.(map[string]any)
		if !ok {
			continue
		}
		for name := range m {
			if !keep["#/components/"+section+"/"+name] {
				delete(m, name)
			}
		}
	}
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

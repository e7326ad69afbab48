package graphql

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParse: operations with names, variable definitions, aliases,
// string escapes, objects and lists are read; fragments, trailing
// tokens, unterminated strings, a bare $ and nesting beyond maxDepth are
// not.
func TestParse(t *testing.T) {
	op, err := parse(`mutation M($input: In! = {a: [1, 2]}) { x: convertPullRequestToDraft(input: {pullRequestId: "P\"R\u0041", n: -3, b: true, v: $v, e: OPEN, l: [null]}) { clientMutationId } }`)
	if err != nil || op.kind != "mutation" || len(op.fields) != 1 {
		t.Fatalf("parse: %v %+v", err, op)
	}
	f := op.fields[0]
	got, _ := json.Marshal(f.args["input"].resolve(variables{"v": json.RawMessage(`{"k":1}`)}))
	if f.key != "x" || f.name != "convertPullRequestToDraft" ||
		string(got) != `{"b":true,"e":"OPEN","l":[null],"n":-3,"pullRequestId":"P\"RA","v":{"k":1}}` {
		t.Fatalf("field %s %s, input %s", f.key, f.name, got)
	}
	for _, bad := range []string{
		`{ viewer { ...F } }`, `{ viewer { login } } x`, `{ repository(owner: "o) { id } }`, `{ repository(owner: $) { id } }`,
		`{}`, `query`, strings.Repeat("{ a ", maxDepth+1) + strings.Repeat("}", maxDepth+1),
		`{ a(x: ` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `) }`,
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}

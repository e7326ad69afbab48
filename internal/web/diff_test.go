package web

import (
	"reflect"
	"testing"
)

// TestParsePatch numbers a unified diff's lines from its hunk headers:
// context lines on both sides, additions on the new, deletions on the old,
// and git's "no newline" marker on neither.
func TestParsePatch(t *testing.T) {
	patch := "@@ -3,3 +3,3 @@ func main() {\n ctx\n-old\n+new\n\\ No newline at end of file\n"
	want := []diffLine{
		{Kind: "hunk", Text: "@@ -3,3 +3,3 @@ func main() {"},
		{Kind: "ctx", Old: "3", New: "3", Text: " ctx"},
		{Kind: "del", Old: "4", Text: "-old"},
		{Kind: "add", New: "4", Text: "+new"},
		{Kind: "ctx", Text: `\ No newline at end of file`},
	}
	if got := parsePatch(patch); !reflect.DeepEqual(got, want) {
		t.Errorf("parsePatch:\n got %+v\nwant %+v", got, want)
	}
	if got := parsePatch(""); got != nil {
		t.Errorf("an empty patch: %+v", got)
	}
	if o, n := hunkStart("@@ -0,0 +1 @@"); o != 0 || n != 1 {
		t.Errorf("hunkStart of a new file: %d %d", o, n)
	}
}

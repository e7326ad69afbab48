package main

import "testing"

// stringAt finds a member's string past the members before it, whatever
// they hold, and nothing where the path does not lead to a string.
func TestStringAt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		payload string
		path    []string
		want    string
	}{
		{`{"a":"x"}`, []string{"a"}, "x"},
		{` { "n" : -1.5e3 , "t":true, "z" :null, "s":"q\"}]", "o":{"a":[1,{"a":"no"}]}, "a" : "yes" } `, []string{"a"}, "yes"},
		{`{"o":{"a":"no"},"r":{"l":[{"d":"no"}],"d":"esc\u00e9\n\"d\""}}`, []string{"r", "d"}, "esc\u00e9\n\"d\""},
		{`{"a":"first","a":"second"}`, []string{"a"}, "first"},
		{`{"b":1}`, []string{"a"}, ""},
		{`{"b":1,"a":2}`, []string{"a"}, ""},
		{`{"a":{"b":"x"}}`, []string{"a"}, ""},
		{`{"a":"x"}`, []string{"a", "b"}, ""},
		{`{"a":"unterminated`, []string{"a"}, ""},
		{`{"b":[1,2`, []string{"a"}, ""},
		{`["a","x"]`, []string{"a"}, ""},
		{``, []string{"a"}, ""},
	} {
		if got := stringAt([]byte(c.payload), c.path...); got != c.want {
			t.Errorf("stringAt(%s, %q) = %q, want %q", c.payload, c.path, got, c.want)
		}
	}
}

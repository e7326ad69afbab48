package httpapi

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestBodyTextWithNULIsRefusedNamingItsField(t *testing.T) {
	type label struct {
		Name string `json:"name"`
	}
	type body struct {
		Title  *string           `json:"title"`
		Labels []label           `json:"labels"`
		Config map[string]string `json:"config"`
		Branch string            `json:"branch" text:"gitname"`
		Raw    json.RawMessage   `json:"raw"`
	}
	cases := []struct{ raw, field string }{
		{`{"title":"ok"}`, ""},
		{`{"title":"a\\u0000b"}`, ""}, // an escaped backslash: text, not a NUL
		{`{"title":"a\u0000b"}`, "title"},
		{`{"labels":[{"name":"x"},{"name":"\u0000"}]}`, "labels.name"},
		{`{"config":{"url":"http://x/\u0000"}}`, "config.url"},
		{`{"branch":"a\u0000b"}`, ""}, // a git name: its area's rule refuses it
		{`{"raw":{"a":"\u0000"}}`, "raw"},
	}
	for _, c := range cases {
		var v body
		if err := json.Unmarshal([]byte(c.raw), &v); err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		err := checkBodyText([]byte(c.raw), &v)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: refused: %v", c.raw, err)
		case c.field != "" && err == nil:
			t.Errorf("%s: accepted", c.raw)
		case c.field != "":
			if got := err.Error(); got == "" || !strings.Contains(got, "'"+c.field+"'") {
				t.Errorf("%s: %q does not name %q", c.raw, got, c.field)
			}
		}
	}
}

func TestQueryTextMustBeStorable(t *testing.T) {
	for raw, ok := range map[string]bool{
		"state=open&head=octo:main": true,
		"head=%C3%A9":               true,
		"head=a%00b":                false,
		"head=%FF%FE":               false,
		"%00=x":                     false,
	} {
		if err := checkQuery(&url.URL{RawQuery: raw}); (err == nil) != ok {
			t.Errorf("%s: got %v, want accepted=%v", raw, err, ok)
		}
	}
}

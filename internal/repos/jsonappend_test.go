package repos_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// TestRepositoryJSONAppender checks that JSON.AppendJSON writes what
// encoding/json writes, for real repositories and for a value with every
// field set (so a field added to JSON but not to AppendJSON fails here).
func TestRepositoryJSONAppender(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 4, 3, 2, 1, 500, time.FixedZone("X", 3600))
	owner := &accounts.Account{ID: 3, Type: accounts.TypeOrg, Login: "acme"}
	user := &accounts.Account{ID: 4, Type: accounts.TypeUser, Login: "octocat", SiteAdmin: true}
	cases := map[string]repos.JSON{
		"zero": {},
		"org repository, admin": repos.ToJSON(repos.URLs{Base: "http://127.0.0.1:8080", SSHPort: 2222}, &repos.Repository{ID: 7, Owner: owner, Name: "widgets", Private: true,
			DefaultBranch: "main", AdvancedSecurity: true, CreatedAt: now, UpdatedAt: now}, repos.Stats{Stargazers: 2, Forks: 1}, auth.RoleAdmin),
		"user repository, anonymous": repos.ToJSON(repos.URLs{Base: "https://forge.example"}, &repos.Repository{ID: 8, Owner: user, Name: "hello",
			Description: "a \"quoted\" <b>&</b> é\u2028\x01 description", ForkOfID: 7, PushedAt: &now, CreatedAt: now}, repos.Stats{}, auth.RoleNone),
		"every field set": filled(t),
	}
	for name, j := range cases {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&j); err != nil {
			t.Fatal(err)
		}
		got := append(j.AppendJSON(nil), '\n')
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want.Bytes())
		}
	}
}

// filled returns a JSON with every field non-zero, strings that need
// escaping, and one level of template repository.
func filled(t *testing.T) repos.JSON {
	var j repos.JSON
	fill(t, reflect.ValueOf(&j).Elem(), 0)
	return j
}

func fill(t *testing.T, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeFor[wire.Time]() {
		v.Set(reflect.ValueOf(wire.T(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(depth) * time.Hour))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s<&>\"\\\t\u00e9\u2029/" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(42 + depth))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), depth)
		}
	case reflect.Pointer:
		if depth > 0 && v.Type().Elem() == reflect.TypeFor[repos.JSON]() {
			return // one level of template repository
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), depth)
		}
	default:
		t.Fatalf("fill: unhandled kind %s (%s)", v.Kind(), v.Type())
	}
}

// TestSimpleRepositoryJSON checks that the simple-repository object is
// the full object's fields from id to hooks_url, in order and byte for
// byte, less the clone addresses, and that encoding/json renders it as
// AppendJSON does.
func TestSimpleRepositoryJSON(t *testing.T) {
	t.Parallel()
	j := filled(t)
	var want []jsonField
	for _, f := range jsonFields(t, j.AppendJSON(nil)) {
		switch f.name {
		case "git_url", "ssh_url", "clone_url", "mirror_url":
			continue
		}
		want = append(want, f)
		if f.name == "hooks_url" {
			break
		}
	}
	simple := j.Simple().AppendJSON(nil)
	if got := jsonFields(t, simple); !reflect.DeepEqual(got, want) {
		t.Errorf("simple repository:\n got %v\nwant %v", got, want)
	}
	var encoded bytes.Buffer
	enc := json.NewEncoder(&encoded)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j.Simple()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encoded.Bytes(), append(simple, '\n')) {
		t.Errorf("encoding/json:\n got %s\nwant %s", encoded.Bytes(), simple)
	}
}

// jsonField is one field of a JSON object: its name and its value as
// written.
type jsonField struct {
	name  string
	value string
}

// jsonFields returns the fields of the JSON object b in their order.
func jsonFields(t *testing.T, b []byte) []jsonField {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var out []jsonField
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatal(err)
		}
		out = append(out, jsonField{name.(string), string(value)})
	}
	return out
}

// TestSSHURL pins ssh_url: the scp-like form on port 22 or without git
// over SSH, the ssh:// form with any other port, on the web base's host.
func TestSSHURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		u    repos.URLs
		want string
	}{
		{repos.URLs{Base: "https://forge.example/api/v3"}, "git@forge.example:octo/hello.git"},
		{repos.URLs{Base: "https://forge.example/api/v3", SSHPort: 22}, "git@forge.example:octo/hello.git"},
		{repos.URLs{Base: "http://127.0.0.1:8080/api/v3", SSHPort: 2222}, "ssh://git@127.0.0.1:2222/octo/hello.git"},
		{repos.URLs{Base: "http://[::1]:8080", SSHPort: 2222}, "ssh://git@[::1]:2222/octo/hello.git"},
	} {
		if got := repos.SSHURL(tc.u, "octo/hello"); got != tc.want {
			t.Errorf("SSHURL(%+v) = %q, want %q", tc.u, got, tc.want)
		}
	}
}

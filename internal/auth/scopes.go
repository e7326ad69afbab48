package auth

import (
	"slices"
	"strings"
)

// classicScopes lists every classic OAuth scope and the scopes it implies
// (a parent grants its children, as on the platform).
var classicScopes = map[string][]string{
	"repo":                      {"repo:status", "repo_deployment", "public_repo", "repo:invite", "security_events"},
	"repo:status":               nil,
	"repo_deployment":           nil,
	"public_repo":               nil,
	"repo:invite":               nil,
	"security_events":           nil,
	"admin:repo_hook":           {"write:repo_hook", "read:repo_hook"},
	"write:repo_hook":           {"read:repo_hook"},
	"read:repo_hook":            nil,
	"admin:org":                 {"write:org", "read:org"},
	"write:org":                 {"read:org"},
	"read:org":                  nil,
	"admin:public_key":          {"write:public_key", "read:public_key"},
	"write:public_key":          {"read:public_key"},
	"read:public_key":           nil,
	"admin:org_hook":            nil,
	"gist":                      nil,
	"notifications":             nil,
	"user":                      {"read:user", "user:email", "user:follow"},
	"read:user":                 nil,
	"user:email":                nil,
	"user:follow":               nil,
	"project":                   {"read:project"},
	"read:project":              nil,
	"delete_repo":               nil,
	"write:packages":            {"read:packages"},
	"read:packages":             nil,
	"delete:packages":           nil,
	"admin:gpg_key":             {"write:gpg_key", "read:gpg_key"},
	"write:gpg_key":             {"read:gpg_key"},
	"read:gpg_key":              nil,
	"codespace":                 nil,
	"workflow":                  nil,
	"admin:enterprise":          {"manage_runners:enterprise", "manage_billing:enterprise", "read:enterprise"},
	"manage_runners:enterprise": nil,
	"manage_billing:enterprise": {"read:enterprise"},
	"read:enterprise":           nil,
	"site_admin":                nil, // the self-managed edition's site administration (internal/siteadmin)
	"audit_log":                 {"read:audit_log"},
	"read:audit_log":            nil,
	"admin:ssh_signing_key":     {"write:ssh_signing_key", "read:ssh_signing_key"},
	"write:ssh_signing_key":     {"read:ssh_signing_key"},
	"read:ssh_signing_key":      nil,
}

// ValidScope reports whether s is a classic scope name.
func ValidScope(s string) bool {
	_, ok := classicScopes[s]
	return ok
}

// Scopes is the set of classic scopes a token holds.
type Scopes []string

// ParseScopes splits a comma or space separated scope list, dropping
// blanks and duplicates. It does not validate names; see ValidScope.
func ParseScopes(s string) Scopes {
	var out Scopes
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Normalize returns the scopes sorted and without duplicates.
func (s Scopes) Normalize() Scopes {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Grants reports whether the scopes include want directly or through a
// parent scope.
func (s Scopes) Grants(want string) bool {
	for _, have := range s {
		if have == want || slices.Contains(classicScopes[have], want) {
			return true
		}
	}
	return false
}

// GrantsAny reports whether the scopes grant at least one of wants.
func (s Scopes) GrantsAny(wants []string) bool {
	return slices.ContainsFunc(wants, s.Grants)
}

// String joins the scopes as the X-OAuth-Scopes header does.
func (s Scopes) String() string { return strings.Join(s, ", ") }

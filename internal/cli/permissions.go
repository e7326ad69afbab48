package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"forgeapi/internal/app"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// PermissionRow is one endpoint in a permission's table.
type PermissionRow struct {
	Endpoint   string `json:"endpoint"`
	Access     string `json:"access"`
	TokenTypes string `json:"token_types"`
	Additional string `json:"additional_permissions,omitempty"`
	Served     bool   `json:"served"`
}

// PermissionTable lists the endpoints one fine-grained permission opens.
type PermissionTable struct {
	Group      auth.Group      `json:"group"`
	Permission string          `json:"permission"`
	Title      string          `json:"title"`
	Endpoints  []PermissionRow `json:"endpoints"`
}

// specExamples are the permission assignments the spec's permission
// tables give as examples for endpoints forgeapi does not serve; the
// tables show them marked.
var specExamples = []struct {
	permission, endpoint, access string
	types                        auth.TokenTypes
}{
	{"organization_administration", "PATCH /orgs/{org}", "write", auth.UAT | auth.IAT},
	{"organization_administration", "DELETE /orgs/{org}", "write", auth.UAT | auth.IAT},
	{"organization_administration", "GET /orgs/{org}/rulesets", "write", auth.UAT | auth.IAT},
	{"organization_administration", "GET /orgs/{org}/rulesets/{ruleset_id}", "write", auth.UAT | auth.IAT},
	{"organization_administration", "GET /orgs/{org}/audit-log", "read", auth.UAT | auth.IAT},
	{"members", "PUT /orgs/{org}/memberships/{username}", "write", auth.UAT | auth.IAT},
	{"members", "GET /orgs/{org}/members", "read", auth.UAT | auth.IAT},
	{"members", "PUT /orgs/{org}/public_members/{username}", "write", auth.UAT},
	{"members", "DELETE /orgs/{org}/public_members/{username}", "write", auth.UAT},
	{"members", "PATCH /user/memberships/orgs/{org}", "write", auth.UAT},
	{"organization_user_blocking", "PUT /orgs/{org}/blocks/{username}", "write", auth.UAT | auth.IAT},
	{"organization_user_blocking", "DELETE /orgs/{org}/blocks/{username}", "write", auth.UAT | auth.IAT},
	{"organization_user_blocking", "GET /orgs/{org}/blocks", "read", auth.UAT | auth.IAT},
	{"actions", "POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel", "write", auth.UAT | auth.IAT},
	{"actions", "GET /repos/{owner}/{repo}/actions/runs", "read", auth.UAT | auth.IAT},
	{"administration", "POST /repos/{owner}/{repo}/transfer", "write", auth.UAT},
	{"statuses", "POST /repos/{owner}/{repo}/statuses/{sha}", "write", auth.UAT | auth.IAT},
	{"statuses", "GET /repos/{owner}/{repo}/commits/{ref}/status", "read", auth.UAT | auth.IAT},
	{"contents", "PUT /repos/{owner}/{repo}/contents/{path}", "write", auth.UAT | auth.IAT},
	{"email_addresses", "POST /user/emails", "write", auth.UAT},
	{"email_addresses", "DELETE /user/emails", "write", auth.UAT},
	{"email_addresses", "GET /user/emails", "read", auth.UAT},
	{"gists", "POST /gists", "write", auth.UAT},
}

// PermissionTables builds the token permission tables from the route
// declarations, plus the spec's examples that forgeapi does not serve.
func PermissionTables(routes []httpapi.Route) []PermissionTable {
	rows := map[string][]PermissionRow{}
	served := map[string]bool{}
	for _, rt := range routes {
		// A wildcard segment {name...} is written {name}, as the spec does.
		endpoint := rt.Method + " " + strings.ReplaceAll(rt.Pattern, "...}", "}")
		served[endpoint] = true
		for _, set := range rt.Auth.Permissions {
			for _, need := range set {
				rows[need.Name] = append(rows[need.Name], PermissionRow{
					Endpoint: endpoint, Access: string(need.Level), TokenTypes: rt.Auth.TokenTypes.String(),
					Additional: additionalNote(rt.Auth, need), Served: true,
				})
			}
		}
	}
	for _, ex := range specExamples {
		if served[ex.endpoint] {
			continue
		}
		rows[ex.permission] = append(rows[ex.permission], PermissionRow{
			Endpoint: ex.endpoint, Access: ex.access, TokenTypes: ex.types.String(), Served: false,
		})
	}
	var tables []PermissionTable
	for _, p := range auth.PermissionCatalog() {
		r := rows[p.Name]
		sort.SliceStable(r, func(i, j int) bool { return endpointPath(r[i].Endpoint) < endpointPath(r[j].Endpoint) })
		tables = append(tables, PermissionTable{Group: p.Group, Permission: p.Name, Title: p.Title, Endpoints: r})
	}
	return tables
}

func endpointPath(e string) string {
	_, path, _ := strings.Cut(e, " ")
	return path + " " + e
}

// additionalNote is the "Additional permissions" column: the other
// permissions or alternatives the endpoint accepts or needs, then the
// route's own note.
func additionalNote(rule auth.Rule, need auth.Need) string {
	var notes []string
	if len(rule.Permissions) > 1 || len(rule.Permissions[0]) > 1 {
		notes = append(notes, "Multiple permissions are required, or a different permission may be used: "+rule.Permissions.String()+". The endpoint's description governs.")
	}
	if rule.Public && need.Level == auth.Read {
		notes = append(notes, "Public resources are served without this permission.")
	}
	if rule.Extra != "" {
		notes = append(notes, rule.Extra)
	}
	return strings.Join(notes, " ")
}

// CredentialRow is an endpoint that takes no token at all, with the
// credentials it takes instead.
type CredentialRow struct {
	Endpoint    string
	Credentials string
}

// CredentialOnlyEndpoints lists the routes that no token can use: those
// that take a user's password (the grants and authorizations API) and
// those that take an OAuth application's client id and secret, and
// those an app calls with its JSON web token.
func CredentialOnlyEndpoints(routes []httpapi.Route) []CredentialRow {
	var out []CredentialRow
	for _, rt := range routes {
		endpoint := rt.Method + " " + rt.Pattern
		switch {
		case rt.Auth.PasswordOnly && rt.Auth.OTP:
			out = append(out, CredentialRow{endpoint, "HTTP Basic with the user's login and password, and a one-time password for users with two-factor authentication"})
		case rt.Auth.PasswordOnly:
			out = append(out, CredentialRow{endpoint, "HTTP Basic with the user's login and password"})
		case rt.Auth.ClientCredentials:
			out = append(out, CredentialRow{endpoint, "HTTP Basic with the OAuth application's client id and client secret"})
		case rt.Auth.AppJWT:
			out = append(out, CredentialRow{endpoint, "the app's JSON web token (RS256, signed with one of its private keys)"})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return endpointPath(out[i].Endpoint) < endpointPath(out[j].Endpoint) })
	return out
}

// WritePermissionsMarkdown renders the tables as Markdown, followed by
// the endpoints that take no token.
func WritePermissionsMarkdown(w io.Writer, tables []PermissionTable, credentialOnly []CredentialRow) error {
	var b strings.Builder
	b.WriteString("# Token permission tables\n\n")
	b.WriteString("Generated by `forgeapi permissions` from the route declarations. Token types: UAT (app user access token), IAT (app installation access token), fine-grained PAT. A row marked *(not served)* would be one of the specification's examples that forgeapi does not serve; today it serves them all.\n\n")
	b.WriteString("Repository and organization permissions act only inside a token's selection (its repositories, its resource owner): outside it a token reads public repositories and writes nothing, a 403 `Resource not accessible by ...`. User permissions are the user's own actions, taken outside the selection too: starring or watching a public repository, following a user. See [API conventions](api.md).\n")
	groups := []struct {
		group auth.Group
		title string
	}{{auth.GroupOrganization, "Organization permissions"}, {auth.GroupRepository, "Repository permissions"},
		{auth.GroupUser, "User permissions"}, {auth.GroupEnterprise, "Enterprise permissions"}}
	for _, g := range groups {
		fmt.Fprintf(&b, "\n## %s\n", g.title)
		for _, t := range tables {
			if t.Group != g.group {
				continue
			}
			fmt.Fprintf(&b, "\n### %s (`%s`)\n\n", t.Title, t.Permission)
			if len(t.Endpoints) == 0 {
				b.WriteString("No endpoint served by forgeapi uses this permission.\n")
				continue
			}
			b.WriteString("| Endpoint | Access | Token types | Additional permissions |\n|---|---|---|---|\n")
			for _, r := range t.Endpoints {
				endpoint := "`" + r.Endpoint + "`"
				if !r.Served {
					endpoint += " *(not served)*"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(endpoint), r.Access, r.TokenTypes, cell(r.Additional))
			}
		}
	}
	b.WriteString("\n## Endpoints that take no token\n\nNo token of any kind opens these endpoints; they take other credentials.\n\n")
	b.WriteString("| Endpoint | Credentials |\n|---|---|\n")
	for _, r := range credentialOnly {
		fmt.Fprintf(&b, "| %s | %s |\n", cell("`"+r.Endpoint+"`"), cell(r.Credentials))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell escapes the text of a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func (c *cli) permissionsCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use: "permissions", Short: "Print the fine-grained token permission tables", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			routes := app.RouteTable()
			tables := PermissionTables(routes)
			switch format {
			case "markdown":
				return WritePermissionsMarkdown(c.stdout, tables, CredentialOnlyEndpoints(routes))
			case "json":
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(tables)
			}
			return fmt.Errorf("--format must be markdown or json, not %q", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown or json")
	return cmd
}

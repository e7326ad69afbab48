package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// cliBaseURL is the base URL the admin commands render url fields with:
// --base-url (or FORGEAPI_BASE_URL), else http://FORGEAPI_ADDR, as the
// server started with the same environment would.
func (c *cli) cliBaseURL() string {
	raw := c.baseURL
	if raw == "" {
		raw = "http://" + envOr("FORGEAPI_ADDR", "127.0.0.1:8080")
	}
	if base, err := app.PublicBaseURL(raw); err == nil {
		return base
	}
	return strings.TrimRight(raw, "/") // Open refused a bad --base-url before any command renders one
}

func (c *cli) userCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users"}
	var password, email, name, totpSecret string
	var siteAdmin bool
	create := &cobra.Command{
		Use: "create LOGIN", Short: "Create a user and print it as JSON", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !accounts.ValidLogin(args[0]) {
				return fmt.Errorf("%q is not a valid login: 1 to 39 letters, digits or single inner hyphens", args[0])
			}
			if _, err := auth.TOTPCode(totpSecret, store.Now()); totpSecret != "" && err != nil {
				return fmt.Errorf("--totp-secret is not a valid base32 secret")
			}
			hash := ""
			if password != "" {
				var err error
				if hash, err = auth.HashPassword(password); err != nil {
					return err
				}
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				sealedTOTP, err := auth.SealTOTPSecret(a.Secrets, totpSecret)
				if err != nil {
					return err
				}
				u, err := accounts.Create(ctx, a.DB, accounts.NewAccount{Type: accounts.TypeUser, Login: args[0],
					Name: name, Email: email, PasswordHash: hash, SealedTOTPSecret: sealedTOTP, SiteAdmin: siteAdmin})
				if err != nil {
					return err
				}
				return c.printJSON(accounts.ToSimpleUser(c.cliBaseURL(), u))
			})
		},
	}
	f := create.Flags()
	f.StringVar(&password, "password", "", "password for HTTP Basic authentication")
	f.StringVar(&email, "email", "", "email address")
	f.StringVar(&name, "name", "", "display name")
	f.BoolVar(&siteAdmin, "site-admin", false, "make the user a site administrator")
	f.StringVar(&totpSecret, "totp-secret", "", "base32 TOTP secret: turns on two-factor authentication")
	cmd.AddCommand(create)
	cmd.AddCommand(c.userManageCommands()...)
	return cmd
}

func (c *cli) orgCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "org", Short: "Manage organizations"}
	var owner, role string
	var saml bool
	create := &cobra.Command{
		Use: "create LOGIN --owner USER", Short: "Create an organization with USER as its owner", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				return a.DB.Tx(ctx, func(tx *store.Tx) error {
					u, err := userArg(ctx, tx, "--owner", owner)
					if err != nil {
						return err
					}
					org, err := accounts.Create(ctx, tx, accounts.NewAccount{Type: accounts.TypeOrg, Login: args[0]})
					if err != nil {
						return err
					}
					if saml {
						if _, err := tx.ExecContext(ctx, `UPDATE accounts SET saml_enforced = TRUE WHERE id = $1`, org.ID); err != nil {
							return err
						}
					}
					if err := accounts.SetMember(ctx, tx, org.ID, u.ID, accounts.RoleOwner); err != nil {
						return err
					}
					return c.printJSON(accounts.ToSimpleOrg(c.cliBaseURL(), org))
				})
			})
		},
	}
	create.Flags().StringVar(&owner, "owner", "", "user who becomes the organization's owner (required)")
	create.Flags().BoolVar(&saml, "saml-enforced", false, "the organization enforces SAML single sign-on")
	_ = create.MarkFlagRequired("owner")
	addMember := &cobra.Command{
		Use: "add-member ORG USER", Short: "Add USER to ORG (or change the role)", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				org, err := accounts.OrgByLogin(ctx, a.DB, args[0])
				if err != nil {
					return fmt.Errorf("no organization %q", args[0])
				}
				u, err := userArg(ctx, a.DB, "USER", args[1])
				if err != nil {
					return err
				}
				return accounts.SetMember(ctx, a.DB, org.ID, u.ID, role)
			})
		},
	}
	addMember.Flags().StringVar(&role, "role", accounts.RoleMember, "member or owner")
	cmd.AddCommand(create, addMember, c.orgRemoveMemberCommand(), c.orgRenameCommand())
	return cmd
}

// orgRenameCommand is `org rename OLD NEW`: PATCH /admin/organizations/{org}
// through the same service (the event's sender is the organization), then
// the renamed organization printed as JSON.
func (c *cli) orgRenameCommand() *cobra.Command {
	return &cobra.Command{
		Use: "rename OLD NEW", Short: "Rename an organization; repository paths under OLD redirect until OLD is taken", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				org, err := accounts.OrgByLogin(ctx, a.DB, args[0])
				if err != nil {
					return fmt.Errorf("no organization %q", args[0])
				}
				renamed, err := a.Orgs.Rename(httpapi.WithBaseURL(ctx, c.cliBaseURL()), org, nil, args[1])
				if err != nil {
					return err
				}
				return c.printJSON(accounts.ToSimpleOrg(c.cliBaseURL(), renamed))
			})
		},
	}
}

func userArg(ctx context.Context, q store.Q, flag, login string) (*accounts.Account, error) {
	if login == "" {
		return nil, fmt.Errorf("%s is required", flag)
	}
	u, err := accounts.UserByLogin(ctx, q, login)
	if err != nil {
		return nil, fmt.Errorf("no user %q", login)
	}
	return u, nil
}

func (c *cli) enterpriseCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "enterprise", Short: "Manage enterprises"}
	var owner string
	var orgs []string
	create := &cobra.Command{
		Use: "create SLUG --owner USER [--org ORG]...", Short: "Create an enterprise", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				return a.DB.Tx(ctx, func(tx *store.Tx) error {
					u, err := userArg(ctx, tx, "--owner", owner)
					if err != nil {
						return err
					}
					e, err := accounts.CreateEnterprise(ctx, tx, args[0], args[0])
					if err != nil {
						return err
					}
					if err := accounts.AddEnterpriseOwner(ctx, tx, e.ID, u.ID); err != nil {
						return err
					}
					for _, login := range orgs {
						if err := addEnterpriseOrg(ctx, tx, e, login); err != nil {
							return err
						}
					}
					return c.printJSON(map[string]any{"id": e.ID, "slug": e.Slug, "name": e.Name})
				})
			})
		},
	}
	create.Flags().StringVar(&owner, "owner", "", "user who becomes the enterprise's owner (required)")
	create.Flags().StringArrayVar(&orgs, "org", nil, "organization that belongs to the enterprise (repeatable)")
	_ = create.MarkFlagRequired("owner")
	addOrg := &cobra.Command{
		Use: "add-org SLUG ORG", Short: "Add an organization to an enterprise", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				e, err := accounts.EnterpriseBySlug(ctx, a.DB, args[0])
				if err != nil {
					return fmt.Errorf("no enterprise %q", args[0])
				}
				return addEnterpriseOrg(ctx, a.DB, e, args[1])
			})
		},
	}
	cmd.AddCommand(create, addOrg, c.enterpriseRemoveOrgCommand())
	return cmd
}

func addEnterpriseOrg(ctx context.Context, q store.Q, e *accounts.Enterprise, login string) error {
	org, err := accounts.OrgByLogin(ctx, q, login)
	if err != nil {
		return fmt.Errorf("no organization %q", login)
	}
	return accounts.AddEnterpriseOrg(ctx, q, e.ID, org.ID)
}

func (c *cli) repoCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "repo", Short: "Manage repositories"}
	var private, advancedSecurity bool
	var branch, description, forkOf string
	create := &cobra.Command{
		Use: "create OWNER/NAME", Short: "Create a repository and print it as JSON", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ownerLogin, name, ok := strings.Cut(args[0], "/")
			if !ok || ownerLogin == "" || name == "" {
				return fmt.Errorf("want OWNER/NAME, got %q", args[0])
			}
			if !repos.ValidName(name) {
				return fmt.Errorf("%q is not a valid repository name: letters, digits, '.', '-' and '_', at most 100, not ending in .git", name)
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				owner, err := accounts.ByLogin(ctx, a.DB, ownerLogin)
				if err != nil || owner.Type == accounts.TypeBot {
					return fmt.Errorf("no user or organization %q", ownerLogin)
				}
				n := repos.NewRepository{Owner: owner, Name: name, Description: description, Private: private,
					DefaultBranch: branch, AdvancedSecurity: advancedSecurity}
				if forkOf != "" {
					o, rn, _ := strings.Cut(forkOf, "/")
					parent, err := repos.ByOwnerAndName(ctx, a.DB, o, rn)
					if err != nil {
						return fmt.Errorf("no repository %q to fork", forkOf)
					}
					n.ForkOfID = parent.ID
				}
				repo, err := a.Repos.Create(ctx, n, owner)
				if err != nil {
					return err
				}
				st, err := repos.StatsOf(ctx, a.DB, repo.ID)
				if err != nil {
					return err
				}
				return c.printJSON(repos.ToJSON(repos.URLs{Base: c.cliBaseURL(), SSHPort: app.SSHPortOf(os.Getenv("FORGEAPI_SSH_ADDR"))}, repo, st, auth.RoleNone))
			})
		},
	}
	f := create.Flags()
	f.BoolVar(&private, "private", false, "make the repository private")
	f.StringVar(&branch, "default-branch", "main", "default branch")
	f.StringVar(&description, "description", "", "description")
	f.BoolVar(&advancedSecurity, "advanced-security", false, "turn on advanced security (dependency review on private repositories)")
	f.StringVar(&forkOf, "fork-of", "", "OWNER/NAME of the repository this one is a fork of")
	cmd.AddCommand(create, c.repoDeleteCommand())
	return cmd
}

// oauthAppCommand manages OAuth applications (the grants and
// authorizations API's); apps are appCommand's.
func (c *cli) oauthAppCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "oauth-app", Short: "Manage OAuth applications"}
	var owner, url, clientID, clientSecret string
	create := &cobra.Command{
		Use: "create NAME --owner USER|ORG [--client-id ID --client-secret SECRET]", Short: "Register an OAuth application; prints client_id and client_secret", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				if owner == "" {
					return fmt.Errorf("--owner is required")
				}
				o, err := accounts.ByLogin(ctx, a.DB, owner)
				if err != nil || o.Type == accounts.TypeBot {
					return fmt.Errorf("no user or organization %q", owner)
				}
				app, err := accounts.CreateAppWithCredentials(ctx, a.DB, o.ID, args[0], url, clientID, clientSecret)
				if errors.Is(err, store.ErrConflict) {
					return fmt.Errorf("client id %q is taken", clientID)
				}
				if err != nil {
					return err
				}
				return c.printJSON(map[string]any{"id": app.ID, "name": app.Name, "url": app.URL,
					"client_id": app.ClientID, "client_secret": app.ClientSecret, "owner": o.Login})
			})
		},
	}
	create.Flags().StringVar(&owner, "owner", "", "user or organization that owns the application (required)")
	create.Flags().StringVar(&url, "url", "", "the application's home page")
	create.Flags().StringVar(&clientID, "client-id", "", "register under this client id (a client with built-in credentials, such as gh's); default a new one")
	create.Flags().StringVar(&clientSecret, "client-secret", "", "use this client secret (at least 16 characters); default a new one")
	_ = create.MarkFlagRequired("owner")
	cmd.AddCommand(create)
	cmd.AddCommand(c.appManageCommands()...)
	cmd.AddCommand(c.oauthWebConfigureCommand())
	return cmd
}

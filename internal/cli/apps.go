package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/apps"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// appCommand manages apps (see docs/apps.md): registration and
// installations, through the same apps.Service as the API.
func (c *cli) appCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "app", Short: "Manage apps: register, install, suspend, uninstall"}
	cmd.AddCommand(c.appCreateCommand(), c.appInstallCommand(), c.appUninstallCommand(), c.appSuspendCommand())
	return cmd
}

// appsService returns the apps service over the App's store.
func appsService(a *app.App) *apps.Service { return a.Apps }

// appCreateFlags are the flags of `forgeapi app create`.
type appCreateFlags struct {
	name, owner, permissions, events, webhookURL, webhookSecret, keyFile string
	public                                                               bool
}

func (c *cli) appCreateCommand() *cobra.Command {
	var f appCreateFlags
	create := &cobra.Command{
		Use:   "create --app NAME --owner USER|ORG --permissions name:read|write,... --private-key-file PATH",
		Short: "Register an app; writes its private key to the file (0600) and prints the app with its client secret (shown once) as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			grant, err := auth.ParseGrant(f.permissions)
			if err != nil {
				return fmt.Errorf("--permissions: %v", err)
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				owner, err := accounts.ByLogin(ctx, a.DB, f.owner)
				if err != nil || owner.Type == accounts.TypeBot {
					return fmt.Errorf("no user or organization %q", f.owner)
				}
				created, err := appsService(a).Create(ctx, apps.NewApp{Name: f.name, Owner: owner, Permissions: grant,
					Events: splitList(f.events), WebhookURL: f.webhookURL, WebhookSecret: f.webhookSecret, Public: f.public})
				if err != nil {
					return err
				}
				if err := os.WriteFile(f.keyFile, created.PrivateKeyPEM, 0o600); err != nil {
					return fmt.Errorf("write the private key (the app is registered; it has no other key): %w", err)
				}
				return c.printJSON(map[string]any{"id": created.ID, "slug": created.Slug, "name": created.Name,
					"owner": owner.Login, "bot": created.Slug + "[bot]", "client_id": created.ClientID,
					"client_secret": created.ClientSecret, "permissions": created.Permissions, "events": created.Events,
					"public": created.Public, "private_key_file": f.keyFile})
			})
		},
	}
	fl := create.Flags()
	fl.StringVar(&f.name, "app", "", "the app's name; its slug and bot login derive from it (required)")
	fl.StringVar(&f.owner, "owner", "", "user or organization that owns the app (required)")
	fl.StringVar(&f.permissions, "permissions", "", "permissions as name:read|write, comma separated (see `forgeapi permissions`; required)")
	fl.StringVar(&f.events, "events", "", "events the app subscribes to, comma separated")
	fl.StringVar(&f.webhookURL, "webhook-url", "", "the app's webhook URL")
	fl.StringVar(&f.webhookSecret, "webhook-secret", "", "the app's webhook secret (stored sealed)")
	fl.BoolVar(&f.public, "public", false, "let accounts other than the owner install it")
	fl.StringVar(&f.keyFile, "private-key-file", "", "where to write the new RSA private key, PEM (required)")
	for _, name := range []string{"app", "owner", "permissions", "private-key-file"} {
		_ = create.MarkFlagRequired(name)
	}
	return create
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// appAndAccount resolves an app slug and an account login.
func appAndAccount(ctx context.Context, q store.Q, slug, login string) (*apps.App, *accounts.Account, error) {
	app, err := apps.BySlug(ctx, q, slug)
	if err != nil {
		return nil, nil, fmt.Errorf("no app %q", slug)
	}
	account, err := accounts.ByLogin(ctx, q, login)
	if err != nil || account.Type == accounts.TypeBot {
		return nil, nil, fmt.Errorf("no user or organization %q", login)
	}
	return app, account, nil
}

func (c *cli) appInstallCommand() *cobra.Command {
	var account, repositories string
	var all bool
	install := &cobra.Command{
		Use:   "install SLUG --account USER|ORG [--repositories a,b | --all-repositories]",
		Short: "Install an app on an account (again: change its repositories) and print the installation as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (repositories != "") {
				return fmt.Errorf("give either --repositories or --all-repositories")
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				app, acct, err := appAndAccount(ctx, a.DB, args[0], account)
				if err != nil {
					return err
				}
				var ids []int64
				for _, name := range splitList(repositories) {
					r, err := repos.ByOwnerAndName(ctx, a.DB, acct.Login, strings.TrimPrefix(name, acct.Login+"/"))
					if err != nil {
						return fmt.Errorf("no repository %s/%s", acct.Login, name)
					}
					ids = append(ids, r.ID)
				}
				inst, err := appsService(a).Install(httpapi.WithBaseURL(ctx, c.cliBaseURL()), app, acct, all, ids, nil)
				if err != nil {
					return err
				}
				j, err := apps.InstallationJSON(ctx, a.DB, c.cliBaseURL(), app, inst)
				if err != nil {
					return err
				}
				return c.printJSON(j)
			})
		},
	}
	install.Flags().StringVar(&account, "account", "", "the user or organization to install on (required)")
	install.Flags().StringVar(&repositories, "repositories", "", "the account's repositories to install on, comma separated")
	install.Flags().BoolVar(&all, "all-repositories", false, "install on every repository of the account, present and future")
	_ = install.MarkFlagRequired("account")
	return install
}

// installationArg resolves an app and its installation on an account.
func installationArg(ctx context.Context, q store.Q, slug, login string) (*apps.App, *apps.Installation, error) {
	app, acct, err := appAndAccount(ctx, q, slug, login)
	if err != nil {
		return nil, nil, err
	}
	inst, err := apps.InstallationOn(ctx, q, app.ID, acct.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("app %q is not installed on %q", slug, login)
	}
	return app, inst, nil
}

func (c *cli) appUninstallCommand() *cobra.Command {
	var account string
	uninstall := &cobra.Command{
		Use: "uninstall SLUG --account USER|ORG", Short: "Uninstall an app; its installation tokens stop at once", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				app, inst, err := installationArg(ctx, a.DB, args[0], account)
				if err != nil {
					return err
				}
				return appsService(a).Uninstall(httpapi.WithBaseURL(ctx, c.cliBaseURL()), app, inst, nil)
			})
		},
	}
	uninstall.Flags().StringVar(&account, "account", "", "the user or organization it is installed on (required)")
	_ = uninstall.MarkFlagRequired("account")
	return uninstall
}

func (c *cli) appSuspendCommand() *cobra.Command {
	var account string
	var unsuspend bool
	suspend := &cobra.Command{
		Use: "suspend SLUG --account USER|ORG [--unsuspend]", Short: "Suspend an installation (its tokens are refused) or lift the suspension", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				app, inst, err := installationArg(ctx, a.DB, args[0], account)
				if err != nil {
					return err
				}
				return appsService(a).Suspend(httpapi.WithBaseURL(ctx, c.cliBaseURL()), app, inst, !unsuspend, nil)
			})
		},
	}
	suspend.Flags().StringVar(&account, "account", "", "the user or organization it is installed on (required)")
	suspend.Flags().BoolVar(&unsuspend, "unsuspend", false, "lift the suspension")
	_ = suspend.MarkFlagRequired("account")
	return suspend
}

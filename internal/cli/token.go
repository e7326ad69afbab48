package cli

import (
	"context"
	"errors"
	"fmt"
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

// tokenFlags are the flags of `forgeapi token create`.
type tokenFlags struct {
	user, scopes, resourceOwner, repositories, permissions, org, appName string
	fineGrained, installation, allRepositories                           bool
}

func (c *cli) tokenCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage tokens"}
	var tf tokenFlags
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a token and print it alone on one line",
		Long: `Create a token and print it alone on one line of stdout.

  forgeapi token create --user USER [--scopes s1,s2]
  forgeapi token create --user USER --fine-grained --resource-owner USER|ORG [--repositories r1,r2|--all-repositories] --permissions name:read|write,...
  forgeapi token create --installation --org ORG [--repositories r1,r2|--all-repositories] --permissions name:read|write,... [--app NAME]`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := tf.parse()
			if err != nil {
				return err
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				if spec.Kind == auth.KindInstallation {
					token, err := tf.installationToken(httpapi.WithBaseURL(ctx, c.cliBaseURL()), a, spec)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintln(c.stdout, token)
					return err
				}
				var token auth.CreatedToken
				err := a.DB.Tx(ctx, func(tx *store.Tx) error {
					if err := tf.resolve(ctx, tx, &spec); err != nil {
						return err
					}
					token, err = auth.CreateToken(ctx, tx, spec)
					return err
				})
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(c.stdout, token.Value)
				return err
			})
		},
	}
	f := create.Flags()
	f.StringVar(&tf.user, "user", "", "the user the token belongs to")
	f.StringVar(&tf.scopes, "scopes", "", "classic scopes, comma separated")
	f.BoolVar(&tf.fineGrained, "fine-grained", false, "create a fine-grained personal access token")
	f.StringVar(&tf.resourceOwner, "resource-owner", "", "fine-grained: the user or organization the token acts on")
	f.StringVar(&tf.repositories, "repositories", "", "repositories of the resource owner the token selects, comma separated")
	f.BoolVar(&tf.allRepositories, "all-repositories", false, "select every repository of the resource owner")
	f.StringVar(&tf.permissions, "permissions", "", "permissions as name:read|write, comma separated (see `forgeapi permissions`)")
	f.BoolVar(&tf.installation, "installation", false, "create an app installation token (acts as the app's bot)")
	f.StringVar(&tf.org, "org", "", "installation: the organization the app is installed on")
	f.StringVar(&tf.appName, "app", "forgeapi-app", "installation: the app (registered on --org and installed when missing); its bot is SLUG[bot]")
	cmd.AddCommand(create)
	cmd.AddCommand(c.tokenManageCommands()...)
	return cmd
}

// parse checks the flags that need no store and returns the spec so far.
func (tf *tokenFlags) parse() (auth.TokenSpec, error) {
	var spec auth.TokenSpec
	if tf.fineGrained && tf.installation {
		return spec, fmt.Errorf("--fine-grained and --installation exclude each other")
	}
	if tf.repositories != "" && tf.allRepositories {
		return spec, fmt.Errorf("--repositories and --all-repositories exclude each other")
	}
	switch {
	case tf.installation:
		spec.Kind = auth.KindInstallation
		if tf.org == "" {
			return spec, fmt.Errorf("--installation needs --org")
		}
	case tf.fineGrained:
		spec.Kind = auth.KindFineGrained
		if tf.user == "" || tf.resourceOwner == "" {
			return spec, fmt.Errorf("--fine-grained needs --user and --resource-owner")
		}
	default:
		spec.Kind = auth.KindClassic
		if tf.user == "" {
			return spec, fmt.Errorf("--user is required")
		}
		if tf.permissions != "" || tf.repositories != "" || tf.allRepositories {
			return spec, fmt.Errorf("--permissions and --repositories need --fine-grained or --installation")
		}
		spec.Scopes = auth.ParseScopes(tf.scopes)
		for _, s := range spec.Scopes {
			if !auth.ValidScope(s) {
				return spec, fmt.Errorf("unknown scope %q", s)
			}
		}
		return spec, nil
	}
	if tf.scopes != "" {
		return spec, fmt.Errorf("--scopes is for classic tokens; fine-grained kinds take --permissions")
	}
	grant, err := auth.ParseGrant(tf.permissions)
	if err != nil {
		return spec, fmt.Errorf("--permissions: %v", err)
	}
	spec.Grant = grant
	spec.AllRepositories = tf.allRepositories
	return spec, nil
}

// resolve looks up the accounts and repositories the flags name.
func (tf *tokenFlags) resolve(ctx context.Context, q store.Q, spec *auth.TokenSpec) error {
	switch spec.Kind {
	case auth.KindClassic:
		u, err := userArg(ctx, q, "--user", tf.user)
		if err != nil {
			return err
		}
		spec.UserID = u.ID
		return nil
	}
	u, err := userArg(ctx, q, "--user", tf.user)
	if err != nil {
		return err
	}
	owner, err := accounts.ByLogin(ctx, q, tf.resourceOwner)
	if err != nil || owner.Type == accounts.TypeBot {
		return fmt.Errorf("no user or organization %q", tf.resourceOwner)
	}
	if owner.IsOrg() {
		role, err := accounts.MemberRole(ctx, q, owner.ID, u.ID)
		if err != nil {
			return err
		}
		if role == "" {
			return fmt.Errorf("user %q is not a member of %q", u.Login, owner.Login)
		}
	} else if owner.ID != u.ID {
		return fmt.Errorf("a fine-grained token's resource owner is its user or one of the user's organizations")
	}
	spec.UserID, spec.ResourceOwnerID = u.ID, owner.ID
	return tf.selectRepositories(ctx, q, owner, spec)
}

func (tf *tokenFlags) selectRepositories(ctx context.Context, q store.Q, owner *accounts.Account, spec *auth.TokenSpec) error {
	for _, name := range strings.Split(tf.repositories, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		name = strings.TrimPrefix(name, owner.Login+"/")
		r, err := repos.ByOwnerAndName(ctx, q, owner.Login, name)
		if err != nil {
			return fmt.Errorf("no repository %s/%s", owner.Login, name)
		}
		spec.RepositoryIDs = append(spec.RepositoryIDs, r.ID)
	}
	return nil
}

// installationToken mints an installation token through the apps model,
// as the API's access_tokens does: the app --app (registered now, owned
// by --org, private, with the permissions asked for, when no app has its
// slug), installed on --org (now, on the repositories asked for, when it
// is not), then a token narrowed to the repositories and permissions
// asked for. Like every installation token it expires after
// apps.TokenLifetime.
func (tf *tokenFlags) installationToken(ctx context.Context, a *app.App, spec auth.TokenSpec) (string, error) {
	org, err := accounts.OrgByLogin(ctx, a.DB, tf.org)
	if err != nil {
		return "", fmt.Errorf("no organization %q", tf.org)
	}
	if err := tf.selectRepositories(ctx, a.DB, org, &spec); err != nil {
		return "", err
	}
	app, err := apps.BySlug(ctx, a.DB, apps.Slug(tf.appName))
	if errors.Is(err, store.ErrNotFound) {
		var created *apps.Created
		if created, err = a.Apps.Create(ctx, apps.NewApp{Name: tf.appName, Owner: org, Permissions: spec.Grant}); err == nil {
			app = &created.App
		}
	}
	if err != nil {
		return "", fmt.Errorf("app %q: %w", tf.appName, err)
	}
	inst, err := apps.InstallationOn(ctx, a.DB, app.ID, org.ID)
	if errors.Is(err, store.ErrNotFound) {
		inst, err = a.Apps.Install(ctx, app, org, spec.AllRepositories, spec.RepositoryIDs, nil)
	}
	if err != nil {
		return "", fmt.Errorf("install app %q on %s: %w", app.Slug, org.Login, err)
	}
	req := apps.TokenRequest{Permissions: map[string]string{}}
	if !spec.AllRepositories {
		req.RepositoryIDs = spec.RepositoryIDs
	}
	for name, level := range spec.Grant {
		req.Permissions[name] = string(level)
	}
	minted, err := a.Apps.Mint(ctx, app, inst, req)
	if err != nil {
		return "", fmt.Errorf("mint a token of app %q on %s: %w", app.Slug, org.Login, err)
	}
	return minted.Token, nil
}

package cli

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/auth"
	"forgeapi/internal/console"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The admin commands that change or remove what the create commands
// made. Each prints nothing on success unless it says otherwise, and
// fails with one line on stderr and exit code 1.

func (c *cli) userManageCommands() []*cobra.Command {
	var password string
	setPassword := &cobra.Command{
		Use: "set-password LOGIN --password PASSWORD", Short: "Set a user's password for HTTP Basic authentication", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if password == "" {
				return fmt.Errorf("--password is required")
			}
			hash, err := auth.HashPassword(password)
			if err != nil {
				return err
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				u, err := userArg(ctx, a.DB, "LOGIN", args[0])
				if err != nil {
					return err
				}
				return a.DB.Tx(ctx, func(tx *store.Tx) error {
					if err := accounts.SetPassword(ctx, tx, u.ID, hash); err != nil {
						return err
					}
					return console.EndSessions(ctx, tx, u.ID)
				})
			})
		},
	}
	setPassword.Flags().StringVar(&password, "password", "", "the new password (required)")

	var secret string
	totp := &cobra.Command{Use: "totp", Short: "Turn a user's two-factor authentication on or off"}
	enable := &cobra.Command{
		Use: "enable LOGIN [--secret BASE32]", Short: "Turn TOTP on; without --secret, a new secret is printed alone on one line", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			generated := secret == ""
			if generated {
				secret = newTOTPSecret()
			} else if _, err := auth.TOTPCode(secret, store.Now()); err != nil {
				return fmt.Errorf("--secret is not a valid base32 secret")
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				u, err := userArg(ctx, a.DB, "LOGIN", args[0])
				if err != nil {
					return err
				}
				sealed, err := auth.SealTOTPSecret(a.Secrets, secret)
				if err != nil {
					return err
				}
				if err := setTOTPSecret(ctx, a.DB, u.ID, sealed); err != nil {
					return err
				}
				if generated {
					_, err = fmt.Fprintln(c.stdout, secret)
				}
				return err
			})
		},
	}
	enable.Flags().StringVar(&secret, "secret", "", "base32 TOTP secret; default a new random one")
	disable := &cobra.Command{
		Use: "disable LOGIN", Short: "Turn TOTP off", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				u, err := userArg(ctx, a.DB, "LOGIN", args[0])
				if err != nil {
					return err
				}
				return setTOTPSecret(ctx, a.DB, u.ID, "")
			})
		},
	}
	totp.AddCommand(enable, disable)

	del := &cobra.Command{
		Use: "delete LOGIN", Short: "Delete a user with its tokens, memberships and applications; refused while it owns repositories or is an organization's only owner", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				return a.DB.Tx(ctx, func(tx *store.Tx) error {
					u, err := userArg(ctx, tx, "LOGIN", args[0])
					if err != nil {
						return err
					}
					if err := checkOwnsNothing(ctx, tx, u); err != nil {
						return err
					}
					return accounts.Delete(ctx, tx, u.ID)
				})
			})
		},
	}
	return []*cobra.Command{setPassword, totp, del}
}

// newTOTPSecret returns a random 160-bit base32 secret (RFC 4226's
// recommended length), as authenticator apps take it.
func newTOTPSecret() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

// checkOwnsNothing refuses to delete a user whose deletion would take
// repositories (and their git data) or an organization's last owner with
// it.
func checkOwnsNothing(ctx context.Context, tx *store.Tx, u *accounts.Account) error {
	owned, err := repos.ListOwnedNames(ctx, tx, u.ID)
	if err != nil {
		return err
	}
	if len(owned) > 0 {
		return fmt.Errorf("user %q owns repositories (%s): delete them first with `forgeapi repo delete`", u.Login, strings.Join(owned, ", "))
	}
	orgs, err := accounts.LockedSoleOwnerOf(ctx, tx, u.ID)
	if err != nil {
		return err
	}
	if len(orgs) > 0 {
		return fmt.Errorf("user %q is the only owner of %s: add another owner first", u.Login, strings.Join(orgs, ", "))
	}
	return nil
}

func (c *cli) orgRemoveMemberCommand() *cobra.Command {
	return &cobra.Command{
		Use: "remove-member ORG USER", Short: "Remove USER from ORG (not its last owner)", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				return a.DB.Tx(ctx, func(tx *store.Tx) error {
					org, err := accounts.OrgByLogin(ctx, tx, args[0])
					if err != nil {
						return fmt.Errorf("no organization %q", args[0])
					}
					u, err := userArg(ctx, tx, "USER", args[1])
					if err != nil {
						return err
					}
					role, err := accounts.MemberRole(ctx, tx, org.ID, u.ID)
					if err != nil {
						return err
					}
					if role == "" {
						return fmt.Errorf("user %q is not a member of %q", u.Login, org.Login)
					}
					if role == accounts.RoleOwner {
						if n, err := accounts.LockedOwnerCount(ctx, tx, org.ID); err != nil {
							return err
						} else if n == 1 {
							return fmt.Errorf("user %q is the last owner of %q: add another owner first", u.Login, org.Login)
						}
					}
					return accounts.RemoveMember(ctx, tx, org.ID, u.ID)
				})
			})
		},
	}
}

func (c *cli) enterpriseRemoveOrgCommand() *cobra.Command {
	return &cobra.Command{
		Use: "remove-org SLUG ORG", Short: "Remove an organization from an enterprise", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				e, err := accounts.EnterpriseBySlug(ctx, a.DB, args[0])
				if err != nil {
					return fmt.Errorf("no enterprise %q", args[0])
				}
				org, err := accounts.OrgByLogin(ctx, a.DB, args[1])
				if err != nil {
					return fmt.Errorf("no organization %q", args[1])
				}
				err = accounts.RemoveEnterpriseOrg(ctx, a.DB, e.ID, org.ID)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("organization %q is not in enterprise %q", org.Login, e.Slug)
				}
				return err
			})
		},
	}
}

func (c *cli) repoDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use: "delete OWNER/NAME", Short: "Delete a repository: its git data, hooks and deliveries (events stay in the feeds)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			owner, name, ok := strings.Cut(args[0], "/")
			if !ok || owner == "" || name == "" {
				return fmt.Errorf("want OWNER/NAME, got %q", args[0])
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				r, err := repos.ByOwnerAndName(ctx, a.DB, owner, name)
				if err != nil {
					return fmt.Errorf("no repository %q", args[0])
				}
				// The owner stands as the sender of the repository deleted
				// event: an admin command has no user of its own.
				if err := a.Repos.Delete(ctx, r, r.Owner); err != nil {
					return fmt.Errorf("delete %s: %w", r.FullName(), err)
				}
				return nil
			})
		},
	}
}

// appJSON is an OAuth application as `oauth-app list` prints it.
type appJSON struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	URL      string `json:"url"`
	ClientID string `json:"client_id"`
	Owner    string `json:"owner"`
}

func (c *cli) appManageCommands() []*cobra.Command {
	var owner string
	list := &cobra.Command{
		Use: "list [--owner USER|ORG]", Short: "List OAuth applications as JSON (never their secrets)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				var ownerID int64
				if owner != "" {
					o, err := accounts.ByLogin(ctx, a.DB, owner)
					if err != nil || o.Type == accounts.TypeBot {
						return fmt.Errorf("no user or organization %q", owner)
					}
					ownerID = o.ID
				}
				apps, err := accounts.Apps(ctx, a.DB, ownerID)
				if err != nil {
					return err
				}
				out := make([]appJSON, 0, len(apps))
				for _, app := range apps {
					o, err := accounts.ByID(ctx, a.DB, app.OwnerID)
					if err != nil {
						return err
					}
					out = append(out, appJSON{ID: app.ID, Name: app.Name, URL: app.URL, ClientID: app.ClientID, Owner: o.Login})
				}
				return c.printJSON(out)
			})
		},
	}
	list.Flags().StringVar(&owner, "owner", "", "only the applications of this user or organization")
	del := &cobra.Command{
		Use: "delete CLIENT_ID", Short: "Delete an OAuth application with its tokens and grants", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				app, err := accounts.AppByClientID(ctx, a.DB, args[0])
				if err != nil {
					return fmt.Errorf("no application with client id %q", args[0])
				}
				return accounts.DeleteApp(ctx, a.DB, app.ID)
			})
		},
	}
	return []*cobra.Command{list, del}
}

func (c *cli) tokenManageCommands() []*cobra.Command {
	var user string
	list := &cobra.Command{
		Use: "list [--user USER]", Short: "List tokens as JSON: id, kind, user, last eight characters, grants (never the value)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				var userID int64
				if user != "" {
					u, err := accounts.ByLogin(ctx, a.DB, user)
					if err != nil || u.IsOrg() {
						return fmt.Errorf("no user %q", user)
					}
					userID = u.ID
				}
				tokens, err := auth.ListTokens(ctx, a.DB, userID)
				if err != nil {
					return err
				}
				return c.printJSON(tokens)
			})
		},
	}
	list.Flags().StringVar(&user, "user", "", "only the tokens of this user (or bot, USER[bot])")
	revoke := &cobra.Command{
		Use: "revoke ID", Short: "Revoke (delete) a token by the id `token list` shows", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("want a token id from `forgeapi token list`, got %q", args[0])
			}
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				err := auth.RevokeToken(ctx, a.DB, id)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no token %d", id)
				}
				return err
			})
		},
	}
	return []*cobra.Command{list, revoke}
}

// setTOTPSecret sets the user's sealed TOTP seed ("" turns two-factor
// off) and ends the user's console sessions, in one transaction.
func setTOTPSecret(ctx context.Context, db *store.DB, userID int64, sealed string) error {
	return db.Tx(ctx, func(tx *store.Tx) error {
		if err := accounts.SetTOTPSecret(ctx, tx, userID, sealed); err != nil {
			return err
		}
		return console.EndSessions(ctx, tx, userID)
	})
}

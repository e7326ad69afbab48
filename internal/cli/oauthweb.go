package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"forgeapi/internal/app"
	"forgeapi/internal/store"
)

// oauthWebConfigureCommand sets the web flow settings of an OAuth
// application or an app: its callback URL and whether it takes the
// device flow. Flags left out keep their value; it prints the settings.
func (c *cli) oauthWebConfigureCommand() *cobra.Command {
	var callbackURL string
	var deviceFlow bool
	cmd := &cobra.Command{
		Use:   "configure CLIENT_ID [--callback-url URL] [--device-flow=true|false]",
		Short: "Set the callback URL and device flow of an OAuth application or app (the web and device flows)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				set, err := a.OAuthWeb.Settings(ctx, args[0])
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no OAuth application or app with client id %q", args[0])
				}
				if err != nil {
					return err
				}
				if cmd.Flags().Changed("callback-url") {
					set.CallbackURL = callbackURL
				}
				if cmd.Flags().Changed("device-flow") {
					set.DeviceFlow = deviceFlow
				}
				if err := a.OAuthWeb.Configure(ctx, args[0], set); err != nil {
					return err
				}
				return c.printJSON(map[string]any{"client_id": args[0], "callback_url": set.CallbackURL, "device_flow": set.DeviceFlow})
			})
		},
	}
	cmd.Flags().StringVar(&callbackURL, "callback-url", "", "where the web flow redirects; redirect_uri must be at or below it")
	cmd.Flags().BoolVar(&deviceFlow, "device-flow", true, "whether the application takes the device flow")
	return cmd
}

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/actions/runnerclient"
)

// runnerCommand is `forgeapi runner`: a runner of Actions jobs on another
// machine, registered with a server's registration token.
func (c *cli) runnerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runner",
		Short: "Run Actions jobs of a forgeapi server on this machine (register, run, remove)",
		Long: "A self-hosted runner: `register` it with a registration token of a repository or organization\n" +
			"(POST .../actions/runners/registration-token), `run` it to take the jobs whose runs-on labels are\n" +
			"all its own (self-hosted, its OS and architecture, its custom labels); the steps run on this host as\n" +
			"this user, without a container. `remove` unregisters it with a remove token.",
	}
	cmd.PersistentFlags().String("config", envOr("FORGEAPI_RUNNER_CONFIG", ".forgeapi-runner.json"),
		"the runner's configuration file, with its credential (env FORGEAPI_RUNNER_CONFIG)")
	cmd.AddCommand(c.runnerRegisterCommand(), c.runnerRunCommand(), c.runnerRemoveCommand())
	return cmd
}

func (c *cli) runnerRegisterCommand() *cobra.Command {
	var reg runnerclient.Registration
	var labels string
	cmd := &cobra.Command{
		Use:   "register",
		Short: "Register this runner with a registration token and keep its credential in --config (mode 0600)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if reg.URL == "" || reg.Token == "" {
				return errors.New("--url and --token are required")
			}
			for _, l := range strings.Split(labels, ",") {
				if l = strings.TrimSpace(l); l != "" {
					reg.Labels = append(reg.Labels, l)
				}
			}
			cfg, err := runnerclient.Register(cmd.Context(), reg)
			if err != nil {
				return err
			}
			path, _ := cmd.Flags().GetString("config")
			if err := cfg.Save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "registered runner %s (id %d, labels %s) in %s\n", cfg.Name, cfg.ID,
				strings.Join(cfg.Labels, ","), path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&reg.URL, "url", "", "the server's URL")
	f.StringVar(&reg.Token, "token", "", "a registration token")
	f.StringVar(&reg.Name, "name", "", "the runner's name (default the host's name)")
	f.StringVar(&labels, "labels", "", "custom labels, comma-separated")
	f.StringVar(&reg.Group, "runner-group", "", "an organization's runner group (default its default group)")
	f.BoolVar(&reg.Replace, "replace", false, "replace a runner of the same name")
	f.BoolVar(&reg.Ephemeral, "ephemeral", false, "an ephemeral runner: `run` takes one job, then the server removes it")
	return cmd
}

func (c *cli) runnerRunCommand() *cobra.Command {
	var dir, jit, images string
	var capacity int
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Take and run jobs until interrupted (a job running then is failed by the server when its lease ends)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if capacity < 1 {
				return errors.New("--capacity must be at least 1")
			}
			cfg, path, err := runnerConfig(cmd, jit, &dir)
			if err != nil {
				return err
			}
			logger, err := c.logger()
			if err != nil {
				return err
			}
			imageMap, err := engine.ParseImages(images)
			if err != nil {
				return fmt.Errorf("--images: %w", err)
			}
			if dir != "" {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = (&runnerclient.Runner{Config: cfg, Dir: dir, Images: imageMap, Logger: logger, Capacity: capacity}).Run(ctx)
			if err == nil && cfg.Ephemeral && path != "" && ctx.Err() == nil {
				return os.Remove(path) // its job ran: the server removed it
			}
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "work", "", "the jobs' work directories' parent (default the system's temporary directory)")
	cmd.Flags().StringVar(&jit, "jitconfig", "", "a just-in-time runner's encoded configuration (generate-jitconfig): run one job, without --config")
	cmd.Flags().IntVar(&capacity, "capacity", 1, "how many jobs to run at a time")
	cmd.Flags().StringVar(&images, "images", os.Getenv("FORGEAPI_RUNNER_IMAGES"),
		"runs-on labels mapped to container images, LABEL=IMAGE,... (as act's -P): those jobs run in a container "+
			"(needs a Docker daemon), the others on this host (env FORGEAPI_RUNNER_IMAGES)")
	return cmd
}

// runnerConfig is the configuration `runner run` runs with: the encoded
// just-in-time one (its work folder the default --work), else --config's
// file, and that file's path.
func runnerConfig(cmd *cobra.Command, jit string, dir *string) (*runnerclient.Config, string, error) {
	if jit != "" {
		cfg, folder, err := runnerclient.FromJIT(jit)
		if err == nil && *dir == "" {
			*dir = folder
		}
		return cfg, "", err
	}
	path, _ := cmd.Flags().GetString("config")
	cfg, err := runnerclient.Load(path)
	return cfg, path, err
}

func (c *cli) runnerRemoveCommand() *cobra.Command {
	var token string
	cmd := &cobra.Command{
		Use:   "remove",
		Short: "Unregister this runner with a remove token and delete --config",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				return errors.New("--token is required")
			}
			path, _ := cmd.Flags().GetString("config")
			cfg, err := runnerclient.Load(path)
			if err != nil {
				return err
			}
			if err := runnerclient.Remove(cmd.Context(), cfg.URL, token, cfg.Name); err != nil {
				return err
			}
			if err := os.Remove(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed runner %s\n", cfg.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "a remove token")
	return cmd
}

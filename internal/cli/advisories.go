package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"forgeapi/internal/app"
	"forgeapi/internal/depreview/advisorydb"
)

func (c *cli) advisoriesCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "advisories", Short: "Manage the advisory database of dependency review"}
	importCmd := &cobra.Command{
		Use:   "import PATH",
		Short: "Import an OSV advisory database (a directory or a zip of OSV JSON files)",
		Long: `Import an advisory database in OSV format: a directory (read recursively) or a
zip archive of JSON files, one advisory per file, as the public advisory
databases publish them.

New advisories are added and changed ones replaced; importing the same files
again changes nothing. Advisories stored before and missing from PATH are
kept. Every file is read and checked before anything is written: an invalid
file aborts the import with nothing stored. Running servers pick the new
advisories up on their next dependency review request.

Prints: imported N advisories: A added, U updated, K unchanged`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			c.say("reading advisories from %s ...", args[0])
			records, err := advisorydb.ReadPath(args[0])
			if err != nil {
				return err
			}
			c.say("read %d advisories in %s; writing them to the store ...", len(records), time.Since(start).Round(time.Millisecond))
			return c.withApp(cmd, func(ctx context.Context, a *app.App) error {
				counts, err := advisorydb.Import(ctx, a.DB, records)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(c.stdout, "imported %d advisories: %d added, %d updated, %d unchanged\n",
					len(records), counts.Added, counts.Updated, counts.Unchanged)
				return err
			})
		},
	}
	cmd.AddCommand(importCmd)
	return cmd
}

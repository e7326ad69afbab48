package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"forgeapi/internal/app"
	"forgeapi/internal/backup"
)

func (c *cli) backupCommand() *cobra.Command {
	var blobSpec string
	var withoutKeys bool
	cmd := &cobra.Command{
		Use:   "backup DIR",
		Short: "Copy the data directory (and the SQLite database) into DIR, consistently, while servers run",
		Long: `Copy the forge's data into DIR, which must not exist or be empty, while its
servers run: the SQLite database (a snapshot, taken first), the git
repositories, the migration archives of the local blob store and the key
files (unless --without-keys). On PostgreSQL the database is not copied: take it with pg_dump
first, then run this command. Restore with forgeapi restore.

Prints what it copied, and what the backup does not hold.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := backup.Backup(cmd.Context(), backup.Source{DataDir: c.dataDir, DatabaseURL: c.databaseURL, Blob: blobSpec,
				WithoutKeys: withoutKeys, Version: app.ReadBuildInfo().String(), Progress: c.progress}, args[0])
			if err != nil {
				return err
			}
			what := "the SQLite database, "
			if s.Database != "sqlite" {
				what = ""
			}
			fmt.Fprintf(c.stdout, "backed up %s%d repositories and %d migration archives into %s (%d files, %.1f MiB)\n",
				what, s.Repositories, s.Blobs, args[0], s.Files, mebibytes(s.Bytes))
			c.printNotes(s.Notes)
			return nil
		},
	}
	cmd.Flags().StringVar(&blobSpec, "blob", os.Getenv("FORGEAPI_BLOB"), "the servers' --blob: empty for DATA/blobs, file://PATH, or s3://... (not copied) (env FORGEAPI_BLOB)")
	cmd.Flags().BoolVar(&withoutKeys, "without-keys", false, "leave the key files (webhook.key, blob-signing.key, tls/, ssh/, signing/) out, to keep them apart from the backup")
	return cmd
}

func (c *cli) restoreCommand() *cobra.Command {
	var blobSpec string
	cmd := &cobra.Command{
		Use:   "restore DIR",
		Short: "Restore the backup in DIR into a new data directory (--data)",
		Long: `Restore the backup that forgeapi backup wrote in DIR into the data directory
--data, which must not exist or be empty. Every file is checked against
the backup's manifest first. On PostgreSQL, restore the pg_dump that goes
with the backup into a new database first and give it with --database.
The repositories are then brought into agreement with the database:
references moved after the database's snapshot are set back to it.
Start the server on --data afterwards.

Prints what it restored and what it changed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := backup.Restore(cmd.Context(), args[0], backup.Target{DataDir: c.dataDir, DatabaseURL: c.databaseURL,
				Blob: blobSpec, Progress: c.progress})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "restored %d repositories and %d migration archives into %s (%d files, %.1f MiB)\n",
				s.Repositories, s.Blobs, c.dataDir, s.Files, mebibytes(s.Bytes))
			c.printNotes(s.Notes)
			return nil
		},
	}
	cmd.Flags().StringVar(&blobSpec, "blob", os.Getenv("FORGEAPI_BLOB"), "the --blob the restored server runs with: empty for DATA/blobs, file://PATH (new or empty), or s3://... (archives not restored) (env FORGEAPI_BLOB)")
	return cmd
}

// printNotes prints a backup's or a restore's notes, one a line.
func (c *cli) printNotes(notes []string) {
	for _, n := range notes {
		fmt.Fprintln(c.stdout, "note: "+n)
	}
}

func mebibytes(n int64) float64 { return float64(n) / (1 << 20) }

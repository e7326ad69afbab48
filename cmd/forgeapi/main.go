// Command forgeapi runs the forgeapi server (`forgeapi serve`) and its
// admin commands. The command line is package cli, the server package
// app; main only hands the command line the arguments and the standard
// streams.
package main

import (
	"context"
	"os"

	"forgeapi/internal/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

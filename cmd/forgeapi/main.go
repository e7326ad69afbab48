// Command forgeapi runs the forgeapi server (`forgeapi serve`) and its
// admin commands. Everything happens in package app; main only hands it
// the arguments and the standard streams.
package main

import (
	"context"
	"os"

	"forgeapi/internal/app"
)

func main() {
	os.Exit(app.Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

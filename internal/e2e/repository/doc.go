// Package repository holds the end-to-end tests of the areas that work on
// a repository's git content: git hosting over HTTP and SSH, contents,
// branch protection, dependency review, backups and organization
// migrations. They share one test binary, as the smaller API areas share
// internal/e2e's: each binary that starts the server links all of it.
// They have a binary apart from internal/e2e's so that neither runs for
// several minutes alone at the end of go test ./....
package repository

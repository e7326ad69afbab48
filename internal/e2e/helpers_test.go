package e2e_test

import (
	"strconv"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// itoa writes an id as it goes in a path.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// status is the HTTP status of go-github's response (0 without one).
func status(resp *github.Response) int { return apptest.ResponseStatus(resp) }

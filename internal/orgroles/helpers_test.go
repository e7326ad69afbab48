package orgroles_test

import (
	"strconv"
	"strings"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

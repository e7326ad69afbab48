package teams

import (
	"strings"
	"time"

	"forgeapi/internal/wire"
)

func wireT(t time.Time) wire.Time { return wire.T(t) }

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

package webhooks

import (
	"net/http"

	"forgeapi/internal/apierr"
)

// notYet answers the endpoints whose handlers are still placeholders
// (deliveries_stub.go); delete it with them.
func notYet() error { return apierr.New(http.StatusNotImplemented, "not implemented yet") }

package apps

import (
	"testing"

	"forgeapi/internal/auth"
)

// TestAppReceives: an app receives an event it subscribes to only with
// the permission the platform's table asks for it, and no event outside
// the table.
func TestAppReceives(t *testing.T) {
	a := &App{Permissions: withMetadata(auth.Grant{"contents": auth.Read}),
		Events: []string{"push", "member", "status", "organization", "issues"}}
	for event, want := range map[string]bool{
		"push":         true,  // contents
		"member":       true,  // metadata, which every app holds
		"status":       false, // statuses not held
		"organization": false, // members not held
		"star":         false, // not subscribed
		"issues":       false, // issues not held
	} {
		if got := a.Receives(event); got != want {
			t.Errorf("Receives(%q) = %v, want %v", event, got, want)
		}
	}
}

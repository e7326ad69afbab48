package e2e_test

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// itoa writes an id as it goes in a path.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// status is the HTTP status of go-github's response (0 without one).
func status(resp *github.Response) int { return apptest.ResponseStatus(resp) }

// describeAlert describes a delivery of the alert event as "<action>
// #<alert number>", and any other delivery as "".
func describeAlert(event string) func(apptest.Delivery) string {
	return func(d apptest.Delivery) string {
		if d.Event != event {
			return ""
		}
		var p struct {
			Action string `json:"action"`
			Alert  struct {
				Number int64 `json:"number"`
			} `json:"alert"`
		}
		if json.Unmarshal(d.Body, &p) != nil {
			return ""
		}
		return fmt.Sprintf("%s #%d", p.Action, p.Alert.Number)
	}
}

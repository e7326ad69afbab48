package apptest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// CheckWebhook validates the body of a webhook delivery of the event (the
// X-Service-Event header) against the hosted description's schema for
// it, and reports a mismatch to t; it does nothing when validation is off.
// A receiver in a test calls it for each delivery it gets.
func CheckWebhook(t testing.TB, event string, body []byte) {
	t.Helper()
	v := SharedValidator()
	if v == nil {
		return
	}
	if err := v.CheckWebhook(event, body); err != nil {
		t.Errorf("OpenAPI: %v", err)
	}
}

// CheckWebhook validates a webhook delivery's body against the hosted
// description's components/schemas/webhook-<event>-<action> (the body's
// action), or webhook-<event> for an event without actions, the names'
// underscores read as hyphens; the self-managed description's, for an
// event the hosted one lacks. It returns nil for a valid body, and
// otherwise the mismatch; an event the description has no schema for is
// a mismatch too. Every validated body counts as a validated exchange.
func (v *Validator) CheckWebhook(event string, body []byte) error {
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return fmt.Errorf("webhook %s: the body is not JSON: %w", event, err)
	}
	var payload struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(body, &payload)
	name, schema, err := webhookSchema(v.webhooks, event, payload.Action)
	if err != nil {
		return err
	}
	if schema == nil {
		// An event of the self-managed edition alone (user, which its
		// global webhooks receive) is in its description only.
		n, s, err := webhookSchema(v.serverWebhooks, event, payload.Action)
		if err != nil {
			return err
		}
		if s != nil {
			name, schema = n, s
		}
	}
	if schema == nil {
		return fmt.Errorf("webhook %s (action %q): the description has no schema %s", event, payload.Action, name)
	}
	schema = withoutUserInstallation(event, schema, value)
	v.validated.Add(1)
	if err := schema.VisitJSON(value, openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("webhook %s (action %q) does not match %s: %s", event, payload.Action, name, shorten(err.Error()))
	}
	return nil
}

// webhookSchema returns the name and schema of an event's payload with the
// action in the description d: webhook-<event>-<action>, else
// webhook-<event>; a nil schema when d has neither (the name is then the
// first one tried).
func webhookSchema(d *description, event, action string) (string, *openapi3.Schema, error) {
	base := "webhook-" + strings.ReplaceAll(event, "_", "-")
	names := []string{base}
	if action != "" {
		names = []string{base + "-" + strings.ReplaceAll(action, "_", "-"), base}
	}
	if event == "repository_dispatch" {
		// Its action is the dispatch's event_type, free-form: the
		// description names its one schema after its example's.
		names = []string{base + "-sample"}
	}
	for _, name := range names {
		schema, err := d.schema(name)
		if err != nil || schema != nil {
			return name, schema, err
		}
	}
	return names[0], nil, nil
}

// withoutUserInstallation is schema with installation no longer required
// for a repository_dispatch that a user's token sent (its body has no
// installation): the description requires it because it describes the
// event as an app sends it, and the platform includes installation only
// in the payloads of an app's dispatch. Other events' schemas are
// returned as they are.
func withoutUserInstallation(event string, schema *openapi3.Schema, value any) *openapi3.Schema {
	body, ok := value.(map[string]any)
	if event != "repository_dispatch" || !ok || body["installation"] != nil {
		return schema
	}
	relaxed := *schema
	relaxed.Required = slices.DeleteFunc(slices.Clone(schema.Required), func(f string) bool { return f == "installation" })
	return &relaxed
}

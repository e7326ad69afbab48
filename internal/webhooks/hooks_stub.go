package webhooks

// Placeholder of the hooks API (replaced by hooks.go / hooks_handlers.go).

import (
	"net/http"

	"forgeapi/internal/apierr"
)

func notYet() error { return apierr.New(http.StatusNotImplemented, "not implemented yet") }

func (h *Handler) listHooks(w http.ResponseWriter, r *http.Request) error    { return notYet() }
func (h *Handler) createHook(w http.ResponseWriter, r *http.Request) error   { return notYet() }
func (h *Handler) getHook(w http.ResponseWriter, r *http.Request) error      { return notYet() }
func (h *Handler) updateHook(w http.ResponseWriter, r *http.Request) error   { return notYet() }
func (h *Handler) deleteHook(w http.ResponseWriter, r *http.Request) error   { return notYet() }
func (h *Handler) getConfig(w http.ResponseWriter, r *http.Request) error    { return notYet() }
func (h *Handler) updateConfig(w http.ResponseWriter, r *http.Request) error { return notYet() }

// HookJSON is the hook as the API shows it (repository or organization
// shape), also the "hook" object of ping and meta payloads.
func (s *Service) HookJSON(h *Hook) any { return nil }

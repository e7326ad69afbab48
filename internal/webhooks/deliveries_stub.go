package webhooks

// Placeholder of the delivery engine (replaced by sink.go, dispatcher.go,
// prune.go and deliveries_handlers.go).

import (
	"context"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/events"
	"forgeapi/internal/store"
)

// HandleEvent is the events sink: it writes one delivery per subscribed hook.
func (s *Service) HandleEvent(ctx context.Context, tx store.Q, e *events.Event) error { return nil }

// EnqueuePing writes a ping delivery to the hook in tx (on creation and
// from the pings endpoint) and wakes the dispatcher after commit.
func (s *Service) EnqueuePing(ctx context.Context, tx store.Q, h *Hook, sender *accounts.Account) error {
	return nil
}

// EnqueueMeta writes the meta ("deleted") delivery of a hook being
// deleted in tx and wakes the dispatcher after commit.
func (s *Service) EnqueueMeta(ctx context.Context, tx store.Q, h *Hook, sender *accounts.Account) error {
	return nil
}

// Dispatcher sends due deliveries.
type Dispatcher struct{ svc *Service }

// NewDispatcher returns the service's Dispatcher.
func NewDispatcher(s *Service) *Dispatcher { return &Dispatcher{svc: s} }

// Run sends deliveries until ctx is done.
func (d *Dispatcher) Run(ctx context.Context) { <-ctx.Done() }

// Pruner deletes deliveries past retention.
type Pruner struct{ svc *Service }

// NewPruner returns the service's Pruner.
func NewPruner(s *Service) *Pruner { return &Pruner{svc: s} }

// Run prunes until ctx is done.
func (p *Pruner) Run(ctx context.Context) { <-ctx.Done() }

func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) error { return notYet() }
func (h *Handler) getDelivery(w http.ResponseWriter, r *http.Request) error    { return notYet() }
func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) error      { return notYet() }
func (h *Handler) ping(w http.ResponseWriter, r *http.Request) error           { return notYet() }
func (h *Handler) test(w http.ResponseWriter, r *http.Request) error           { return notYet() }

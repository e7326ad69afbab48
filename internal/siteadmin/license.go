package siteadmin

import (
	"context"
	"net/http"

	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// unlimited is the seats of forgeapi's license: it limits none.
const unlimited = "unlimited"

// License is the installation's license: forgeapi's has no seat limit
// and never expires; the seats used are its users who are not suspended
// (a suspended user frees its seat, as on the platform).
type License struct {
	SeatsUsed int64
}

// GetLicense counts the seats used, in one query.
func (s *Service) GetLicense(ctx context.Context) (License, error) {
	var l License
	err := s.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM accounts WHERE type = 'User' AND suspended_at IS NULL`).
		Scan(&l.SeatsUsed)
	return l, store.Normalize(err)
}

// licenseJSON is the platform's license-info object.
type licenseJSON struct {
	Seats          string `json:"seats"`
	SeatsUsed      int64  `json:"seats_used"`
	SeatsAvailable string `json:"seats_available"`
	Kind           string `json:"kind"`
}

// getLicense serves GET /enterprise/settings/license.
func (h *Handler) getLicense(w http.ResponseWriter, r *http.Request) error {
	l, err := h.Service.GetLicense(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, licenseJSON{Seats: unlimited, SeatsUsed: l.SeatsUsed, SeatsAvailable: unlimited,
		Kind: "standard"})
	return nil
}

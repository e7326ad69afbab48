package secretscanning

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"time"

	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// scanJSON is the platform's secret-scanning-scan.
type scanJSON struct {
	Type        string     `json:"type"`
	Status      string     `json:"status"`
	CompletedAt *wire.Time `json:"completed_at"`
	StartedAt   *wire.Time `json:"started_at"`
}

// historyJSON is the platform's secret-scanning-scan-history: forgeapi
// runs incremental scans of pushes only (no backfills: secret scanning
// is on from a repository's creation, and its patterns are fixed).
type historyJSON struct {
	IncrementalScans            []scanJSON `json:"incremental_scans"`
	PatternUpdateScans          []scanJSON `json:"pattern_update_scans"`
	BackfillScans               []scanJSON `json:"backfill_scans"`
	CustomPatternBackfillScans  []scanJSON `json:"custom_pattern_backfill_scans"`
	GenericSecretsBackfillScans []scanJSON `json:"generic_secrets_backfill_scans"`
}

// latestScan is the repository's latest incremental scan: one under way
// ("running" while a server holds its lease, else "pending") or the last
// one finished; false when there was none.
func latestScan(ctx context.Context, q store.Q, repoID int64) (scanJSON, bool, error) {
	var leased sql.NullTime
	err := q.QueryRowContext(ctx, `SELECT lease_until FROM secret_scanning_work WHERE repository_id = $1
		ORDER BY id LIMIT 1`, repoID).Scan(&leased)
	switch {
	case err == nil:
		scan := scanJSON{Type: "git", Status: "pending"}
		if leased.Valid && leased.Time.After(time.Now()) {
			scan.Status = "running" // its start is not kept: started_at stays null
		}
		return scan, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return scanJSON{}, false, store.Normalize(err)
	}
	var started, completed time.Time
	err = q.QueryRowContext(ctx, `SELECT started_at, completed_at FROM secret_scanning_scans WHERE repository_id = $1`, repoID).
		Scan(&started, &completed)
	if errors.Is(err, sql.ErrNoRows) {
		return scanJSON{}, false, nil
	}
	if err != nil {
		return scanJSON{}, false, store.Normalize(err)
	}
	s, c := wire.T(started.UTC()), wire.T(completed.UTC())
	return scanJSON{Type: "git", Status: "completed", StartedAt: &s, CompletedAt: &c}, true, nil
}

// scanHistory serves GET /repos/{owner}/{repo}/secret-scanning/scan-history.
func (h *Handler) scanHistory(w http.ResponseWriter, r *http.Request) error {
	repo, err := enabledRepo(r)
	if err != nil {
		return err
	}
	out := historyJSON{IncrementalScans: []scanJSON{}, PatternUpdateScans: []scanJSON{}, BackfillScans: []scanJSON{},
		CustomPatternBackfillScans: []scanJSON{}, GenericSecretsBackfillScans: []scanJSON{}}
	scan, ok, err := latestScan(r.Context(), h.Service.DB, repo.ID)
	if err != nil {
		return err
	}
	if ok {
		out.IncrementalScans = append(out.IncrementalScans, scan)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

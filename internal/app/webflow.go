package app

import (
	"context"
	"fmt"
	"path/filepath"

	"forgeapi/internal/git/gitsign"
	"forgeapi/internal/sigverify"
	"forgeapi/internal/store"
)

// WebFlowKeyFile is where the key the server signs its own commits with
// (merges, the contents API) is kept under the data directory.
func WebFlowKeyFile(dataDir string) string {
	return filepath.Join(dataDir, "signing", "web_flow_ed25519")
}

// openWebFlow opens the server's web-flow key, made at first start, and
// records its public half in the database, where sigverify finds it.
func openWebFlow(ctx context.Context, cfg Config, db *store.DB) (*gitsign.Signer, error) {
	s, err := gitsign.Open(WebFlowKeyFile(cfg.DataDir))
	if err != nil {
		return nil, fmt.Errorf("web-flow key: %w", err)
	}
	if err := sigverify.TrustWebFlowKey(ctx, db, s.PublicKey(), cfg.Now()); err != nil {
		return nil, fmt.Errorf("record the web-flow key: %w", err)
	}
	return s, nil
}

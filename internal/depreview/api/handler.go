// Package api serves dependency review over HTTP: GET
// /repos/{owner}/{repo}/dependency-graph/compare/{basehead} (spec endpoint
// 20). It resolves BASE...HEAD in the repository's bare git repository,
// extracts the dependencies of every manifest changed between the merge
// base and the head (package depreview), diffs them and attaches the
// vulnerabilities of the stored advisory database (package advisorydb).
//
// Parsed manifests are cached by blob SHA in a bounded LRU that the
// Handler owns: a blob's dependencies never change, so paging through a
// comparison, or comparing a branch again after one more push, parses only
// what is new.
package api

import (
	"log/slog"

	"forgeapi/internal/depreview"
	"forgeapi/internal/depreview/advisorydb"
	"forgeapi/internal/repos"
)

// DefaultCacheDependencies is the default bound of the parsed-manifest
// cache, counted in dependencies (about 200 bytes each): roughly 40 MB.
const DefaultCacheDependencies = 200_000

// Config configures a Handler. Repos and Advisories are required.
type Config struct {
	Repos      *repos.Service
	Advisories *advisorydb.Source
	// Extractor parses manifests; nil means depreview.NewExtractor().
	Extractor *depreview.Extractor
	// CacheDependencies bounds the parsed-manifest cache by the number of
	// dependencies it holds; 0 means DefaultCacheDependencies, a negative
	// value turns the cache off.
	CacheDependencies int
	// Logger receives notes about manifests that cannot be parsed; nil
	// means slog.Default().
	Logger *slog.Logger
}

// Handler serves the dependency review endpoint. Create it with New; it is
// safe for concurrent use.
type Handler struct {
	repos      *repos.Service
	advisories *advisorydb.Source
	extractor  *depreview.Extractor
	manifests  *manifestCache
	logger     *slog.Logger
}

// New returns a Handler for cfg.
func New(cfg Config) *Handler {
	if cfg.Extractor == nil {
		cfg.Extractor = depreview.NewExtractor()
	}
	if cfg.CacheDependencies == 0 {
		cfg.CacheDependencies = DefaultCacheDependencies
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Handler{
		repos:      cfg.Repos,
		advisories: cfg.Advisories,
		extractor:  cfg.Extractor,
		manifests:  newManifestCache(cfg.CacheDependencies),
		logger:     cfg.Logger,
	}
}

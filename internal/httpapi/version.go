package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/apierr"
)

// The API versions forgeapi serves; DefaultVersion is used when a request
// names none.
const (
	Version20221128 = "2022-11-28"
	Version20260310 = "2026-03-10"
	DefaultVersion  = Version20221128
)

// SupportedVersions lists the versions a request may ask for.
var SupportedVersions = []string{Version20221128, Version20260310}

// Version headers: requests name a version in VersionHeader (or its
// alias, which go-github sends); responses echo the one used.
const (
	VersionHeader         = "X-Service-Api-Version"
	VersionAliasHeader    = "X-GitHub-Api-Version"
	VersionSelectedHeader = "X-Service-Api-Version-Selected"
)

type versionKey struct{}

// APIVersion returns the version selected for the request.
func APIVersion(ctx context.Context) string {
	if v, ok := ctx.Value(versionKey{}).(string); ok {
		return v
	}
	return DefaultVersion
}

func negotiateVersion(r *http.Request) (string, error) {
	v := strings.TrimSpace(headerValue(r.Header, VersionHeader))
	if v == "" {
		v = strings.TrimSpace(headerValue(r.Header, "X-Github-Api-Version")) // VersionAliasHeader
	}
	if v == "" {
		return DefaultVersion, nil
	}
	if !slices.Contains(SupportedVersions, v) {
		return "", apierr.BadRequest("API version %q is not supported. Supported versions: %s.", v, strings.Join(SupportedVersions, ", "))
	}
	return v, nil
}

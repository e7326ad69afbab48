package artifacts

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"forgeapi/internal/apierr"
)

// The resource names that validation errors carry.
const (
	resDeployment = "DeploymentRecord"
	resStorage    = "StorageRecord"
)

// Limits of the request fields, as the platform sets them.
const (
	maxClusterDeployments = 1000
	maxTags               = 5
	maxRuntimeRisks       = 4
	maxNameLen            = 256
	maxVersionLen         = 100
	maxEnvironmentLen     = 128
	maxDeploymentNameLen  = 256
	maxServiceRepoLen     = 100
	maxArtifactURLLen     = 152
	maxPathLen            = 512
	maxRegistryURLLen     = 256
	maxRegistryRepoLen    = 128
	// The platform states no limit for tags; these are forgeapi's.
	maxTagKeyLen   = 128
	maxTagValueLen = 256
)

// The deployment and storage statuses.
const (
	statusDeployed       = "deployed"
	statusDecommissioned = "decommissioned"
	statusActive         = "active"
	statusEOL            = "eol"
	statusDeleted        = "deleted"
)

// runtimeRisks are the supported values of runtime_risks.
var runtimeRisks = []string{"critical-resource", "internet-exposed", "lateral-movement", "sensitive-data"}

var (
	sha256Digest = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	// anyDigest is <algorithm>:<lowercase hex>, the algorithm as OCI
	// writes it (lowercase alphanumerics joined by + . _ -).
	anyDigest       = regexp.MustCompile(`^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-f0-9]+$`)
	clusterName     = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)
	serviceRepoName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// digestHexLen is the hex length of the registered digest algorithms.
var digestHexLen = map[string]int{"sha1": 40, "sha256": 64, "sha384": 96, "sha512": 128}

// maxDigestLen bounds a storage digest: sha512 and some room.
const maxDigestLen = 256

// validSHA256Digest reports whether s is sha256: and 64 lowercase hex.
func validSHA256Digest(s string) bool { return sha256Digest.MatchString(s) }

// validDigest reports whether s is <algorithm>:<lowercase hex>, with the
// right length for a registered algorithm.
func validDigest(s string) bool {
	if len(s) > maxDigestLen || !anyDigest.MatchString(s) {
		return false
	}
	algo, hex, _ := strings.Cut(s, ":")
	if n, ok := digestHexLen[algo]; ok {
		return len(hex) == n
	}
	return len(hex) >= 32 && len(hex)%2 == 0
}

// checker collects the field errors of one request. prefix is prepended
// to field names ("deployments[3].").
type checker struct {
	resource string
	prefix   string
	errs     *apierr.Fields
}

func (c checker) add(field, code, format string, args ...any) {
	*c.errs = append(*c.errs, apierr.FieldError{Resource: c.resource, Field: c.prefix + field, Code: code,
		Message: fmt.Sprintf(format, args...)})
}

// required checks a required string: present and 1 to max characters.
func (c checker) required(field string, v *string, max int) string {
	if v == nil {
		c.add(field, apierr.CodeMissingField, "%s is required", field)
		return ""
	}
	c.length(field, *v, 1, max)
	return *v
}

// optional checks an optional string: when present, min to max characters.
func (c checker) optional(field string, v *string, min, max int) string {
	if v == nil {
		return ""
	}
	c.length(field, *v, min, max)
	return *v
}

// length checks that v has min to max characters; too long is
// apierr.TooLong, as for every stored string.
func (c checker) length(field, v string, min, max int) {
	switch {
	case apierr.TooLongFor(v, max):
		*c.errs = append(*c.errs, apierr.TooLong(c.resource, c.prefix+field, max))
	case min == 1 && v == "":
		c.add(field, apierr.CodeInvalid, "%s must not be empty", field)
	case utf8.RuneCountInString(v) < min:
		c.add(field, apierr.CodeInvalid, "%s must be %d to %d characters", field, min, max)
	}
}

// oneOf checks that v is one of the allowed values.
func (c checker) oneOf(field, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	c.add(field, apierr.CodeInvalid, "%s must be one of: %s", field, strings.Join(allowed, ", "))
}

// match checks v against a pattern, describing the wanted form.
func (c checker) match(field, v string, ok bool, want string) {
	if !ok {
		c.add(field, apierr.CodeInvalid, "%s must be %s", field, want)
	}
}

// tags checks the tags object: at most 5 entries, keys of at most
// maxTagKeyLen and values of at most maxTagValueLen characters (a
// value's field is tags.<key>).
func (c checker) tags(tags map[string]string) map[string]string {
	if len(tags) > maxTags {
		c.add("tags", apierr.CodeInvalid, "tags may have at most %d entries", maxTags)
		return tags
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if apierr.TooLongFor(k, maxTagKeyLen) {
			*c.errs = append(*c.errs, apierr.FieldError{Resource: c.resource, Field: c.prefix + "tags", Code: apierr.CodeCustom,
				Message: apierr.TooLongMessage("a key of tags", maxTagKeyLen)})
			continue
		}
		c.length("tags."+k, tags[k], 0, maxTagValueLen)
	}
	if tags == nil {
		return map[string]string{}
	}
	return tags
}

// risks checks runtime_risks: unique supported values, at most 4.
func (c checker) risks(risks []string) []string {
	if len(risks) > maxRuntimeRisks {
		c.add("runtime_risks", apierr.CodeInvalid, "runtime_risks may have at most %d entries", maxRuntimeRisks)
		return risks
	}
	seen := map[string]bool{}
	for i, r := range risks {
		field := fmt.Sprintf("runtime_risks[%d]", i)
		if seen[r] {
			c.add(field, apierr.CodeInvalid, "runtime_risks must not repeat %q", r)
		}
		seen[r] = true
		c.oneOf(field, r, runtimeRisks...)
	}
	if risks == nil {
		return []string{}
	}
	return risks
}

// serviceRepository reads service_repository, or its platform alias
// github_repository: a repository name of 1 to 100 letters, digits, '.',
// '-' or '_'. Both given and different is an error.
func (c checker) serviceRepository(v, alias *string) string {
	field := "service_repository"
	switch {
	case v == nil && alias == nil:
		return ""
	case v == nil:
		v, field = alias, "github_repository"
	case alias != nil && *alias != *v:
		c.add("github_repository", apierr.CodeInvalid, "github_repository and service_repository name different repositories")
	}
	c.length(field, *v, 1, maxServiceRepoLen)
	c.match(field, *v, *v == "" || serviceRepoName.MatchString(*v), "a repository name of letters, digits, '.', '-' and '_'")
	return *v
}

// httpsURL checks an optional URL that must be absolute https.
func (c checker) httpsURL(field, v string) {
	if v == "" {
		return
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		c.add(field, apierr.CodeInvalid, "%s must be an https:// URL", field)
	}
}

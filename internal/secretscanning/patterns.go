package secretscanning

import (
	"bytes"
	"cmp"
	"regexp"
	"slices"

	"forgeapi/internal/auth"
)

// Pattern is one kind of secret the scanner finds: the platform's
// secret_type and secret_type_display_name, and the expression of the
// secret itself. Valid, when set, confirms a match offline (a checksum),
// so that look-alikes are not reported.
type Pattern struct {
	Type        string
	DisplayName string
	Expr        *regexp.Regexp
	Valid       func(secret string) bool
}

// Patterns is the table of secrets scanned for: formats that are
// recognised without asking their issuer (fixed prefixes, fixed lengths,
// checksums). A match must stand alone: the characters on either side may
// not be letters, digits or underscores.
var Patterns = []Pattern{
	{"forgeapi_personal_access_token", "forgeapi Personal Access Token", regexp.MustCompile(`fap_[0-9A-Za-z]{36}`), auth.LooksLikeToken},
	{"forgeapi_fine_grained_personal_access_token", "forgeapi Fine-grained Personal Access Token", regexp.MustCompile(`fapat_[0-9A-Za-z]{36}`), auth.LooksLikeToken},
	{"forgeapi_oauth_access_token", "forgeapi OAuth Access Token", regexp.MustCompile(`fao_[0-9A-Za-z]{36}`), auth.LooksLikeToken},
	{"forgeapi_app_installation_access_token", "forgeapi App Installation Access Token", regexp.MustCompile(`fas_[0-9A-Za-z]{36}`), auth.LooksLikeToken},
	{"forgeapi_app_user_to_server_token", "forgeapi App User To Server Token", regexp.MustCompile(`fau_[0-9A-Za-z]{36}`), auth.LooksLikeToken},
	{"github_personal_access_token", "GitHub Personal Access Token", regexp.MustCompile(`ghp_[0-9A-Za-z]{36}|github_pat_[0-9A-Za-z]{22}_[0-9A-Za-z]{59}`), nil},
	{"github_oauth_access_token", "GitHub OAuth Access Token", regexp.MustCompile(`gho_[0-9A-Za-z]{36}`), nil},
	{"github_app_installation_access_token", "GitHub App Installation Access Token", regexp.MustCompile(`ghs_[0-9A-Za-z]{36}`), nil},
	{"github_app_user_to_server_token", "GitHub App User To Server Token", regexp.MustCompile(`ghu_[0-9A-Za-z]{36}`), nil},
	{"github_refresh_token", "GitHub Refresh Token", regexp.MustCompile(`ghr_[0-9A-Za-z]{36,76}`), nil},
	{"aws_access_key_id", "Amazon AWS Access Key ID", regexp.MustCompile(`(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}`), nil},
	{"slack_api_token", "Slack API Token", regexp.MustCompile(`xox[abposr]-[0-9]{8,13}-[0-9A-Za-z-]{8,}`), nil},
	{"slack_incoming_webhook_url", "Slack Incoming Webhook URL", regexp.MustCompile(`https://hooks\.slack\.com/services/T[0-9A-Z]{8,12}/B[0-9A-Z]{8,12}/[0-9A-Za-z]{24}`), nil},
	{"stripe_api_key", "Stripe API Key", regexp.MustCompile(`[sr]k_live_[0-9A-Za-z]{24,99}`), nil},
	{"stripe_test_secret_key", "Stripe Test API Secret Key", regexp.MustCompile(`sk_test_[0-9A-Za-z]{24,99}`), nil},
	{"google_api_key", "Google API Key", regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`), nil},
	{"npm_access_token", "npm Access Token", regexp.MustCompile(`npm_[0-9A-Za-z]{36}`), nil},
}

// PatternOf returns the pattern of a secret type, false for a type not in
// Patterns.
func PatternOf(secretType string) (Pattern, bool) {
	for _, p := range Patterns {
		if p.Type == secretType {
			return p, true
		}
	}
	return Pattern{}, false
}

// Match is one secret found in a text: its pattern, the secret, and where
// it is (lines from 1; columns from 1, the end column just past the
// secret's last byte, as the platform counts them on 8-bit text).
type Match struct {
	Type        string
	Secret      string
	StartLine   int
	EndLine     int
	StartColumn int
	EndColumn   int
}

// maxScanBytes is the largest blob scanned; larger files (archives, data)
// are left out, as binary files are.
const maxScanBytes = 4 << 20

// Scan returns the secrets in content, in the order they appear, or none
// for binary content (a NUL byte in the first 8000 bytes) or content over
// 4 MiB.
func Scan(content []byte) []Match {
	if len(content) > maxScanBytes || bytes.IndexByte(content[:min(len(content), 8000)], 0) >= 0 {
		return nil
	}
	var out []Match
	for _, p := range Patterns {
		for _, loc := range p.Expr.FindAllIndex(content, -1) {
			start, end := loc[0], loc[1]
			if (start > 0 && isWordByte(content[start-1])) || (end < len(content) && isWordByte(content[end])) {
				continue
			}
			secret := string(content[start:end])
			if p.Valid != nil && !p.Valid(secret) {
				continue
			}
			out = append(out, place(content, p.Type, secret, start, end))
		}
	}
	sortMatches(out)
	return out
}

// place is the match of content[start:end] with its lines and columns.
func place(content []byte, typ, secret string, start, end int) Match {
	line := 1 + bytes.Count(content[:start], []byte{'\n'})
	lineStart := bytes.LastIndexByte(content[:start], '\n') + 1
	endLine := line + bytes.Count(content[start:end], []byte{'\n'})
	endLineStart := lineStart
	if endLine != line {
		endLineStart = start + bytes.LastIndexByte(content[start:end], '\n') + 1
	}
	return Match{Type: typ, Secret: secret, StartLine: line, EndLine: endLine,
		StartColumn: start - lineStart + 1, EndColumn: end - endLineStart + 1}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// sortMatches orders matches by place.
func sortMatches(m []Match) {
	slices.SortStableFunc(m, func(a, b Match) int {
		return cmp.Or(cmp.Compare(a.StartLine, b.StartLine), cmp.Compare(a.StartColumn, b.StartColumn))
	})
}

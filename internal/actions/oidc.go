package actions

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"gopkg.in/yaml.v3"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/secretbox"
	"forgeapi/internal/store"
)

// OIDC tokens for jobs, as the self-managed edition issues them: a job
// whose permissions grant id-token: write gets ACTIONS_ID_TOKEN_REQUEST_URL
// and ACTIONS_ID_TOKEN_REQUEST_TOKEN (its runtime token); a GET of the
// URL with that bearer token (and audience=, default the owner's URL)
// answers {"value": JWT}, signed RS256 by the server's key kept in
// actions_oidc_keys (made on first use, sealed by Box). The issuer is
// {base}/_services/token, whose .well-known/openid-configuration and JWKS
// are served. The subject is repo:OWNER/REPO:CONTEXT by default, or the
// repository's (or its organization's) customized claim keys.

// oidcPath is the issuer's path under the server's base URL.
const oidcPath = "/_services/token"

// oidcLifetime is how long an OIDC token is valid.
const oidcLifetime = 10 * time.Minute

// issuer is the OIDC tokens' issuer.
func (s *Service) issuer() string { return strings.TrimSuffix(s.BaseURL, "/") + oidcPath }

// registerOIDC mounts the token endpoint, the discovery document and the
// JWKS.
func (s *Service) registerOIDC(mux interface{ Handle(string, http.Handler) }) {
	mux.Handle("GET "+oidcPath+"/idtoken", http.HandlerFunc(s.serveIDToken))
	mux.Handle("GET "+oidcPath+"/.well-known/openid-configuration", http.HandlerFunc(s.serveOIDCConfig))
	mux.Handle("GET "+oidcPath+"/.well-known/jwks", http.HandlerFunc(s.serveJWKS))
}

// oidcKey is a signing key and its id.
type oidcKey struct {
	Kid string
	Key *rsa.PrivateKey
}

// oidcKeys returns the kept signing keys, newest first, making one when
// there is none.
func (s *Service) oidcKeys(ctx context.Context) ([]oidcKey, error) {
	keys, err := s.loadOIDCKeys(ctx)
	if err != nil || len(keys) > 0 {
		return keys, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der := x509.MarshalPKCS1PrivateKey(key)
	sum := sha256.Sum256(x509.MarshalPKCS1PublicKey(&key.PublicKey))
	kid := hex.EncodeToString(sum[:16])
	text := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}))
	if s.Box != nil {
		if text, err = s.Box.Seal(text); err != nil {
			return nil, err
		}
	}
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO actions_oidc_keys (kid, private_key, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (kid) DO NOTHING`, kid, text, store.Now()); err != nil {
		return nil, store.Normalize(err)
	}
	return s.loadOIDCKeys(ctx) // a concurrent first use may have kept another: the newest wins
}

// loadOIDCKeys reads the kept keys, newest first.
func (s *Service) loadOIDCKeys(ctx context.Context) ([]oidcKey, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT kid, private_key FROM actions_oidc_keys ORDER BY id DESC`)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []oidcKey
	for rows.Next() {
		var kid, text string
		if err := rows.Scan(&kid, &text); err != nil {
			return nil, err
		}
		if secretbox.IsSealed(text) {
			if s.Box == nil {
				return nil, errors.New("actions: the OIDC key is sealed and the server has no secret box")
			}
			if text, err = s.Box.Open(text); err != nil {
				return nil, err
			}
		}
		block, _ := pem.Decode([]byte(text))
		if block == nil {
			return nil, errors.New("actions: the OIDC key is not PEM")
		}
		key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, oidcKey{Kid: kid, Key: key})
	}
	return out, rows.Err()
}

// serveOIDCConfig answers the issuer's discovery document.
func (s *Service) serveOIDCConfig(w http.ResponseWriter, r *http.Request) {
	iss := s.issuer()
	writeOIDCJSON(w, http.StatusOK, map[string]any{
		"issuer": iss, "jwks_uri": iss + "/.well-known/jwks",
		"subject_types_supported": []string{"public", "pairwise"}, "response_types_supported": []string{"id_token"},
		"claims_supported": []string{"sub", "aud", "exp", "iat", "iss", "jti", "nbf", "ref", "sha", "repository", "repository_id",
			"repository_owner", "repository_owner_id", "run_id", "run_number", "run_attempt", "actor", "actor_id", "workflow",
			"workflow_ref", "event_name", "ref_type", "head_ref", "base_ref", "environment", "job_workflow_ref",
			"repository_visibility", "runner_environment"},
		"id_token_signing_alg_values_supported": []string{"RS256"}, "scopes_supported": []string{"openid"},
	})
}

// serveJWKS answers the public keys of the kept signing keys.
func (s *Service) serveJWKS(w http.ResponseWriter, r *http.Request) {
	keys, err := s.oidcKeys(r.Context())
	if err != nil {
		writeOIDCJSON(w, http.StatusInternalServerError, map[string]string{"message": "Server Error"})
		return
	}
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		pub := k.Key.PublicKey
		out = append(out, map[string]any{"kty": "RSA", "alg": "RS256", "use": "sig", "kid": k.Kid,
			"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())})
	}
	writeOIDCJSON(w, http.StatusOK, map[string]any{"keys": out})
}

// writeOIDCJSON writes v as JSON with status.
func writeOIDCJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serveIDToken answers GET {issuer}/idtoken?audience=A with the calling
// job's OIDC token: 401 without a live runtime token, 403 for a job whose
// permissions do not grant id-token: write.
func (s *Service) serveIDToken(w http.ResponseWriter, r *http.Request) {
	c, err := s.runtimeCallerOf(r)
	if errors.Is(err, errRuntimeAuth) {
		writeOIDCJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	var token string
	if err == nil {
		token, err = s.idToken(r.Context(), c, r.URL.Query().Get("audience"))
	}
	switch {
	case errors.Is(err, errNoIDToken):
		writeOIDCJSON(w, http.StatusForbidden, map[string]string{"message": err.Error()})
	case err != nil:
		writeOIDCJSON(w, http.StatusInternalServerError, map[string]string{"message": "Server Error"})
	default:
		writeOIDCJSON(w, http.StatusOK, map[string]string{"value": token, "count": "1"})
	}
}

// errNoIDToken is the answer to a job without id-token: write.
var errNoIDToken = errors.New("the job's permissions do not grant id-token: write")

// idToken signs the caller job's OIDC token for the audience.
func (s *Service) idToken(ctx context.Context, c *runtimeCaller, audience string) (string, error) {
	r, err := runByID(ctx, s.DB, c.RepoID, c.RunID)
	if err != nil {
		return "", err
	}
	j, err := s.JobByID(ctx, s.DB, c.RepoID, c.JobID)
	if err != nil {
		return "", err
	}
	if ok, err := s.idTokenAllowed(ctx, r, j); err != nil || !ok {
		if err == nil {
			err = errNoIDToken
		}
		return "", err
	}
	claims, err := s.oidcClaims(ctx, r, j)
	if err != nil {
		return "", err
	}
	if audience == "" {
		audience = strings.TrimSuffix(s.BaseURL, "/") + "/" + claims["repository_owner"].(string)
	}
	now := time.Now()
	claims["aud"], claims["iss"], claims["jti"] = audience, s.issuer(), randomToken()
	claims["iat"], claims["nbf"], claims["exp"] = now.Unix(), now.Add(-5*time.Second).Unix(), now.Add(oidcLifetime).Unix()
	keys, err := s.oidcKeys(ctx)
	if err != nil {
		return "", err
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = keys[0].Kid
	return t.SignedString(keys[0].Key)
}

// idTokenAllowed reports whether the job may have an OIDC token: its
// permissions (the job's, else the workflow's) grant id-token: write
// (or write-all), and a fork's pull request only where its private
// repository sends write tokens.
func (s *Service) idTokenAllowed(ctx context.Context, r *Run, j *Job) (bool, error) {
	if !declaresIDToken(r.WorkflowFile, strings.Split(j.Key, engine.KeySep)[0]) {
		return false, nil
	}
	if !forkPR(r) {
		return true, nil
	}
	if s.Settings == nil {
		return false, nil
	}
	pol, err := s.Settings.ForkRunPolicy(ctx, s.DB, r.RepoID)
	return pol.Private && pol.WriteToken, err
}

// declaresIDToken reports whether the workflow's permissions for the job
// key grant id-token: write.
func declaresIDToken(workflow, jobKey string) bool {
	var doc struct {
		Permissions yaml.Node `yaml:"permissions"`
		Jobs        map[string]struct {
			Permissions yaml.Node `yaml:"permissions"`
		} `yaml:"jobs"`
	}
	_ = yaml.Unmarshal([]byte(workflow), &doc)
	node := doc.Jobs[jobKey].Permissions
	if node.Kind == 0 {
		node = doc.Permissions
	}
	switch node.Kind {
	case yaml.ScalarNode:
		return node.Value == "write-all"
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == "id-token" {
				return node.Content[i+1].Value == "write"
			}
		}
	}
	return false
}

// oidcClaims are the job's claims but aud, iss and times: the run's
// github fields, and sub from the subject's claim keys.
func (s *Service) oidcClaims(ctx context.Context, r *Run, j *Job) (jwt.MapClaims, error) {
	vars, err := runVars(ctx, s.DB, r)
	if err != nil {
		return nil, err
	}
	var ids struct{ RepoID, OwnerID, ActorID int64 }
	var private bool
	if err := s.DB.QueryRowContext(ctx, `SELECT r.id, r.owner_id, r.private FROM repositories r WHERE r.id = $1`, r.RepoID).
		Scan(&ids.RepoID, &ids.OwnerID, &private); err != nil {
		return nil, store.Normalize(err)
	}
	visibility := "public"
	if private {
		visibility = "private"
	}
	refType := "branch"
	if strings.HasPrefix(vars["ref"], "refs/tags/") {
		refType = "tag"
	}
	workflowRef := vars["repository"] + "/" + r.WorkflowPath + "@" + vars["ref"]
	c := jwt.MapClaims{"repository": vars["repository"], "repository_id": itoa(ids.RepoID), "repository_owner": vars["repository_owner"],
		"repository_owner_id": itoa(ids.OwnerID), "repository_visibility": visibility, "ref": vars["ref"], "ref_type": refType,
		"sha": r.HeadSHA, "workflow": r.Name, "workflow_ref": workflowRef, "workflow_sha": r.HeadSHA,
		"job_workflow_ref": workflowRef, "job_workflow_sha": r.HeadSHA, "run_id": itoa(r.ID), "run_number": itoa(r.RunNumber),
		"run_attempt": itoa(int64(r.RunAttempt)), "actor": vars["actor"], "event_name": r.Event, "head_ref": vars["head_ref"],
		"base_ref": vars["base_ref"], "runner_environment": "self-hosted"}
	if actor, err := actorOf(ctx, s.DB, r.TriggeringActorID); err == nil && actor != nil {
		c["actor_id"] = itoa(actor.ID)
	}
	if j.Environment != "" {
		c["environment"] = j.Environment
	}
	keys := []string{"repo", "context"}
	if s.Settings != nil {
		if keys, err = s.Settings.SubjectClaimKeys(ctx, r.RepoID); err != nil {
			return nil, err
		}
	}
	c["sub"] = subject(keys, c)
	return c, nil
}

// subject is the sub claim of the claim keys: each key:value, joined by
// colons, where repo is OWNER/REPO and context is environment:NAME,
// pull_request or ref:REF.
func subject(keys []string, c jwt.MapClaims) string {
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		switch k {
		case "repo":
			parts = append(parts, "repo:"+c["repository"].(string))
		case "context":
			switch env, _ := c["environment"].(string); {
			case env != "":
				parts = append(parts, "environment:"+env)
			case c["event_name"] == "pull_request":
				parts = append(parts, "pull_request")
			default:
				parts = append(parts, "ref:"+c["ref"].(string))
			}
		default:
			v, _ := c[k].(string)
			parts = append(parts, k+":"+v)
		}
	}
	return strings.Join(parts, ":")
}

// withIDToken gives a job that may have OIDC tokens the request URL and
// token (its runtime token).
func (s *Service) withIDToken(ctx context.Context, env map[string]string, r *Run, j *Job) error {
	ok, err := s.idTokenAllowed(ctx, r, j)
	if err != nil || !ok {
		return err
	}
	env["ACTIONS_ID_TOKEN_REQUEST_URL"] = s.issuer() + "/idtoken?api-version=2.0"
	env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = env["ACTIONS_RUNTIME_TOKEN"]
	return nil
}

package actions

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/store"
)

// The results service a job's steps reach (ACTIONS_RESULTS_URL): the
// twirp JSON services of the official clients (@actions/artifact,
// @actions/cache, the upload-artifact, download-artifact and cache
// actions), served at the server's root, and the signed addresses their
// blob uploads go to (uploads.go).
const (
	artifactServicePath = "/twirp/github.actions.results.api.v1.ArtifactService/"
	cacheServicePath    = "/twirp/github.actions.results.api.v1.CacheService/"
	uploadPathPrefix    = "/_actions/uploads/"
)

// maxTwirpBody bounds a twirp request's JSON body.
const maxTwirpBody = 1 << 20

// runtimeCaller is the job a runtime token was minted for.
type runtimeCaller struct {
	JobID, RunID, RepoID int64
}

// hashToken is how runtime and upload tokens are stored: their SHA-256.
func hashToken(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

// randomToken is 32 random bytes, base64url.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// runtimeToken mints the job's ACTIONS_RUNTIME_TOKEN: a JWT whose scp
// claim carries "Actions.Results:RUN_ID:JOB_ID" (the clients read the
// backend ids from it without checking its signature) and whose third
// part is random. The server checks no signature: it knows the token by
// its hash, stored until the job ends (or jobTokenLifetime passed).
func (s *Service) runtimeToken(ctx context.Context, r *Run, j *Job) (string, error) {
	now := store.Now()
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, err := json.Marshal(map[string]any{
		"scp": "Actions.GenericRead:00000000-0000-0000-0000-000000000000 Actions.Results:" + itoa(r.ID) + ":" + itoa(j.ID),
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(jobTokenLifetime).Unix(),
	})
	if err != nil {
		return "", err
	}
	token := header + "." + base64.RawURLEncoding.EncodeToString(claims) + "." + randomToken()
	_, err = s.DB.ExecContext(ctx, `INSERT INTO actions_runtime_tokens (token_hash, job_id, run_id, repository_id, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, hashToken(token), j.ID, r.ID, r.RepoID, now.Add(jobTokenLifetime))
	return token, store.Normalize(err)
}

// withRuntime gives the job the results service's address and its
// runtime token (ACTIONS_RESULTS_URL, ACTIONS_RUNTIME_URL,
// ACTIONS_RUNTIME_TOKEN, ACTIONS_CACHE_URL, ACTIONS_CACHE_SERVICE_V2);
// revokeJobTokens deletes the token when the job ends.
func (s *Service) withRuntime(ctx context.Context, env map[string]string, r *Run, j *Job) error {
	token, err := s.runtimeToken(ctx, r, j)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(s.BaseURL, "/") + "/"
	env["ACTIONS_RUNTIME_TOKEN"] = token
	env["ACTIONS_RESULTS_URL"], env["ACTIONS_RUNTIME_URL"], env["ACTIONS_CACHE_URL"] = base, base, base
	env["ACTIONS_CACHE_SERVICE_V2"] = "true"
	return nil
}

// errRuntimeAuth is a request without a live runtime token.
var errRuntimeAuth = errors.New("actions: no valid runtime token")

// runtimeCallerOf authenticates a results service request by its bearer
// runtime token.
func (s *Service) runtimeCallerOf(r *http.Request) (*runtimeCaller, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return nil, errRuntimeAuth
	}
	var c runtimeCaller
	err := s.DB.QueryRowContext(r.Context(), `SELECT job_id, run_id, repository_id FROM actions_runtime_tokens
		WHERE token_hash = $1 AND expires_at > $2`, hashToken(token), store.Now()).Scan(&c.JobID, &c.RunID, &c.RepoID)
	if errors.Is(store.Normalize(err), store.ErrNotFound) {
		return nil, errRuntimeAuth
	}
	return &c, err
}

// twirpError is a twirp error: its code and message, sent with the HTTP
// status twirp maps the code to.
type twirpError struct {
	Status int
	Code   string
	Msg    string
}

func (e *twirpError) Error() string { return e.Code + ": " + e.Msg }

func twirpNotFound(msg string) error { return &twirpError{http.StatusNotFound, "not_found", msg} }
func twirpInvalid(msg string) error {
	return &twirpError{http.StatusBadRequest, "invalid_argument", msg}
}

// twirpMethod is one method of a twirp service: it decodes its request
// from body and returns its response.
type twirpMethod func(ctx context.Context, c *runtimeCaller, body []byte) (any, error)

// serveTwirp answers a twirp JSON call of m, authenticated by the runtime
// token; errors are twirp's JSON errors (internal ones are not shown).
func (s *Service) serveTwirp(m twirpMethod) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.runtimeCallerOf(r)
		if err != nil {
			if errors.Is(err, errRuntimeAuth) {
				err = &twirpError{http.StatusUnauthorized, "unauthenticated", "a valid ACTIONS_RUNTIME_TOKEN is required"}
			}
			writeTwirpError(w, err)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxTwirpBody))
		if err != nil {
			writeTwirpError(w, twirpInvalid("the request body could not be read"))
			return
		}
		out, err := m(withReached(r), c, body)
		if err != nil {
			writeTwirpError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}

// writeTwirpError writes err as twirp's JSON error.
func writeTwirpError(w http.ResponseWriter, err error) {
	var te *twirpError
	if !errors.As(err, &te) {
		te = &twirpError{http.StatusInternalServerError, "internal", "internal error"}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(te.Status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": te.Code, "msg": te.Msg})
}

// decodeTwirp reads a twirp JSON request (protobuf's JSON mapping: field
// names as in the proto file, snake_case, as the clients send them, or
// lowerCamelCase, which protobuf parsers accept too; int64 as strings).
func decodeTwirp(body []byte, v any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return twirpInvalid("the request body is not a JSON object")
	}
	snake := make(map[string]json.RawMessage, len(fields))
	for k, f := range fields {
		snake[snakeCase(k)] = f
	}
	b, _ := json.Marshal(snake)
	if err := json.Unmarshal(b, v); err != nil {
		return twirpInvalid("the request body is not valid JSON of the method's request")
	}
	return nil
}

// snakeCase is a lowerCamelCase protobuf JSON name's proto name.
func snakeCase(s string) string {
	var b strings.Builder
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// backendIDs checks a request's backend ids against the caller's run and
// job (the job id may be empty, as download-artifact sends it).
func (c *runtimeCaller) backendIDs(run, job string) error {
	if run != itoa(c.RunID) || (job != "" && job != itoa(c.JobID)) {
		return twirpNotFound("the workflow run or job is not the token's")
	}
	return nil
}

// int64String is protobuf's JSON int64: a string (or a number).
type int64String int64

func (v *int64String) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	n, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	*v = int64String(n)
	return err
}

// MarshalJSON writes the value as protobuf's JSON does, a string.
func (v int64String) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatInt(int64(v), 10) + `"`), nil
}

package auth

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// App is an app that authenticated with its JSON web token: the
// principal of the routes whose Rule has AppJWT.
type App struct {
	ID       int64
	Slug     string
	ClientID string
	OwnerID  int64 // the user or organization that owns the app
	BotID    int64 // the app's bot account, {slug}[bot]
}

// The limits of an app's JWT, as the platform has them: exp at most ten
// minutes after iat, and a minute of clock skew either way.
const (
	MaxJWTLifetime = 10 * time.Minute
	JWTClockSkew   = 60 * time.Second
)

// The platform's 401 messages for apps' JWTs.
const (
	msgJWTUndecodable = "A JSON web token could not be decoded"
	msgJWTExpTooFar   = "'Expiration time' claim ('exp') is too far in the future"
	msgJWTExpired     = "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
	msgJWTBadIAT      = "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
	msgJWTNoApp       = "Integration not found"
)

// ErrInstallationSuspended is the 403 of a token of a suspended
// installation, and of minting one.
func ErrInstallationSuspended() *apierr.Error {
	return apierr.Forbidden("This installation has been suspended")
}

// LooksLikeJWT reports whether a credential has the shape of a JSON web
// token (three base64url segments, the header starting with "eyJ"); no
// token of ours has it.
func LooksLikeJWT(s string) bool {
	return strings.HasPrefix(s, "eyJ") && strings.Count(s, ".") == 2
}

// AppKeys finds apps and their public keys for JWT verification. Lookups
// are cached per issuer (a store.ReadCache over apps and app_keys, so a
// new key or a deleted app takes effect at once) and parsed keys per key
// id (a key's PEM never changes), so that verifying a JWT parses no PEM
// and, while the cache holds the app, queries nothing.
type AppKeys struct {
	db     *store.DB
	byIss  *store.ReadCache[string, *appRecord]
	parsed sync.Map // key id -> *rsa.PublicKey
}

// appRecord is an app with the ids and PEMs of its public keys.
type appRecord struct {
	app  App
	keys []appKey
}

type appKey struct {
	id  int64
	pem string
}

// NewAppKeys returns the app key lookups over db, cached for at most ttl
// (0: store.DefaultReadCacheTTL).
func NewAppKeys(db *store.DB, ttl time.Duration) *AppKeys {
	return &AppKeys{db: db, byIss: store.NewReadCache[string, *appRecord](db, ttl, "apps", "app_keys", "accounts")}
}

// lookUp returns the app whose id (decimal) or client id is iss, with its
// keys; store.ErrNotFound when there is none.
func (k *AppKeys) lookUp(ctx context.Context, iss string) (*appRecord, error) {
	return k.byIss.Get(iss, func() (*appRecord, error) {
		id, _ := strconv.ParseInt(iss, 10, 64)
		rows, err := k.db.QueryContext(ctx, `
			SELECT a.id, a.slug, a.client_id, a.owner_id, a.bot_id, COALESCE(k.id, 0), COALESCE(k.public_key, '')
			FROM apps a LEFT JOIN app_keys k ON k.app_id = a.id
			WHERE a.id = $1 OR a.client_id = $2 ORDER BY k.id`, id, iss)
		if err != nil {
			return nil, store.Normalize(err)
		}
		defer rows.Close()
		var rec *appRecord
		for rows.Next() {
			var a App
			var key appKey
			if err := rows.Scan(&a.ID, &a.Slug, &a.ClientID, &a.OwnerID, &a.BotID, &key.id, &key.pem); err != nil {
				return nil, store.Normalize(err)
			}
			if rec == nil {
				rec = &appRecord{app: a}
			}
			if key.id != 0 {
				rec.keys = append(rec.keys, key)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, store.Normalize(err)
		}
		if rec == nil {
			return nil, store.ErrNotFound
		}
		return rec, nil
	})
}

// verificationKeys returns the parsed public keys of the record, parsing
// each PEM once per process.
func (k *AppKeys) verificationKeys(rec *appRecord) (jwt.VerificationKeySet, error) {
	var set jwt.VerificationKeySet
	for _, key := range rec.keys {
		if v, ok := k.parsed.Load(key.id); ok {
			set.Keys = append(set.Keys, v.(*rsa.PublicKey))
			continue
		}
		pub, err := ParseRSAPublicKeyPEM(key.pem)
		if err != nil {
			return set, err
		}
		k.parsed.Store(key.id, pub)
		set.Keys = append(set.Keys, pub)
	}
	return set, nil
}

// ParseRSAPublicKeyPEM reads an RSA public key in PEM (PKIX "PUBLIC KEY"
// or PKCS #1 "RSA PUBLIC KEY").
func ParseRSAPublicKeyPEM(s string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("auth: no PEM block in public key")
	}
	if block.Type == "RSA PUBLIC KEY" {
		return x509.ParsePKCS1PublicKey(block.Bytes)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("auth: public key is not RSA")
	}
	return pub, nil
}

// AuthenticateApp authenticates the request of a route whose Rule has
// AppJWT: no Authorization header is anonymous; `Bearer <JWT>` signed
// (RS256) by one of the keys of the app its iss names (the app id, as a
// number or a string, or its client id) is that app. Every other
// credential, and every JWT that does not verify, is the platform's 401.
func (a *Authenticator) AuthenticateApp(ctx context.Context, r *http.Request) (*Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return &Principal{}, nil
	}
	scheme, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	if s := strings.ToLower(scheme); s != "bearer" && s != "token" || !LooksLikeJWT(cred) || a.AppKeys == nil {
		return nil, apierr.Unauthorized(msgJWTUndecodable)
	}
	app, err := a.verifyAppJWT(ctx, cred)
	if err != nil {
		return nil, err
	}
	return &Principal{App: app, Method: MethodAppJWT}, nil
}

// verifyAppJWT checks the token's signature against its app's keys, then
// its times against the clock.
func (a *Authenticator) verifyAppJWT(ctx context.Context, token string) (*App, error) {
	claims := jwt.MapClaims{}
	var rec *appRecord
	var lookupErr error
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithoutClaimsValidation())
	_, err := parser.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) {
		iss, ok := issuer(claims["iss"])
		if !ok {
			return nil, errNoApp
		}
		if rec, lookupErr = a.AppKeys.lookUp(ctx, iss); lookupErr != nil {
			if errors.Is(lookupErr, store.ErrNotFound) {
				lookupErr = nil
				return nil, errNoApp
			}
			return nil, lookupErr
		}
		keys, err := a.AppKeys.verificationKeys(rec)
		lookupErr = err
		return keys, err
	})
	switch {
	case lookupErr != nil:
		return nil, lookupErr // the store failed, or a stored key is unreadable
	case errors.Is(err, errNoApp):
		return nil, apierr.Unauthorized(msgJWTNoApp)
	case err != nil:
		return nil, apierr.Unauthorized(msgJWTUndecodable)
	}
	if err := checkJWTTimes(claims, a.now()); err != nil {
		return nil, err
	}
	app := rec.app
	return &app, nil
}

// errNoApp is the key function's error for an iss that names no app.
var errNoApp = errors.New("no app")

// issuer reads the iss claim: a number (the app id) or a string (the app
// id or the client id).
func issuer(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, x != ""
	case float64:
		if x != math.Trunc(x) || x <= 0 {
			return "", false
		}
		return strconv.FormatInt(int64(x), 10), true
	}
	return "", false
}

// checkJWTTimes applies the platform's rules to iat and exp: iat an
// integer no later than now (give or take the skew) and no older than the
// longest lifetime; exp later than now and at most MaxJWTLifetime after
// iat.
func checkJWTTimes(claims jwt.MapClaims, now time.Time) error {
	iat, ok := integer(claims["iat"])
	if !ok || iat > now.Add(JWTClockSkew).Unix() || iat < now.Add(-MaxJWTLifetime-JWTClockSkew).Unix() {
		return apierr.Unauthorized(msgJWTBadIAT)
	}
	exp, ok := integer(claims["exp"])
	if !ok || exp <= now.Add(-JWTClockSkew).Unix() {
		return apierr.Unauthorized(msgJWTExpired)
	}
	if exp-iat > int64(MaxJWTLifetime/time.Second) {
		return apierr.Unauthorized(msgJWTExpTooFar)
	}
	return nil
}

// integer reads a numeric claim that holds a whole number.
func integer(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}

package accounts

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// App is an OAuth application.
type App struct {
	ID        int64
	OwnerID   int64
	Name      string
	URL       string
	ClientID  string
	CreatedAt time.Time
}

// CreatedApp is an app just created, with its secret (known only now).
type CreatedApp struct {
	App
	ClientSecret string
}

// ClientIDLength is the length of an OAuth application's client id.
const ClientIDLength = 20

// CreateApp registers an OAuth application owned by a user or an
// organization, with a new 20-character client id and a secret that is
// stored only as its hash.
func CreateApp(ctx context.Context, q store.Q, ownerID int64, name, url string) (*CreatedApp, error) {
	return CreateAppWithCredentials(ctx, q, ownerID, name, url, "", "")
}

// CreateAppWithCredentials is CreateApp with a chosen client id and
// secret (an empty one is generated): a deployment registers a client that
// has its credentials built in (the gh CLI's OAuth app) under them. The
// client id is 1 to 40 letters, digits, '.', '_' or '-', the secret at
// least 16 characters; a taken client id is store.ErrConflict.
func CreateAppWithCredentials(ctx context.Context, q store.Q, ownerID int64, name, url, clientID, secret string) (*CreatedApp, error) {
	if clientID == "" {
		clientID = "Iv1." + auth.RandomString(ClientIDLength-4)
	} else if !validClientID(clientID) {
		return nil, fmt.Errorf("client id %q: 1 to 40 letters, digits, '.', '_' or '-'", clientID)
	}
	if secret == "" {
		secret = auth.RandomString(40)
	} else if len(secret) < 16 {
		return nil, errors.New("client secret: at least 16 characters")
	}
	a := &CreatedApp{
		App:          App{OwnerID: ownerID, Name: name, URL: url, ClientID: clientID, CreatedAt: store.Now()},
		ClientSecret: secret,
	}
	err := q.QueryRowContext(ctx, `
		INSERT INTO oauth_apps (owner_id, name, url, client_id, client_secret_hash, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
		ownerID, name, url, a.ClientID, auth.HashToken(a.ClientSecret), a.CreatedAt).Scan(&a.ID)
	return a, store.Normalize(err)
}

// validClientID reports whether id is a client id CreateAppWithCredentials
// takes.
func validClientID(id string) bool {
	if len(id) == 0 || len(id) > 40 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AppByClientID returns the application with the client id.
func AppByClientID(ctx context.Context, q store.Q, clientID string) (*App, error) {
	var a App
	err := q.QueryRowContext(ctx, `SELECT id, owner_id, name, url, client_id, created_at FROM oauth_apps WHERE client_id = $1`, clientID).
		Scan(&a.ID, &a.OwnerID, &a.Name, &a.URL, &a.ClientID, &a.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &a, nil
}

// AppByID returns the application with the id.
func AppByID(ctx context.Context, q store.Q, id int64) (*App, error) {
	var a App
	err := q.QueryRowContext(ctx, `SELECT id, owner_id, name, url, client_id, created_at FROM oauth_apps WHERE id = $1`, id).
		Scan(&a.ID, &a.OwnerID, &a.Name, &a.URL, &a.ClientID, &a.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &a, nil
}

// CheckAppSecret reports whether secret is the application's client secret.
func CheckAppSecret(ctx context.Context, q store.Q, appID int64, secret string) (bool, error) {
	var hash string
	if err := q.QueryRowContext(ctx, `SELECT client_secret_hash FROM oauth_apps WHERE id = $1`, appID).Scan(&hash); err != nil {
		return false, store.Normalize(err)
	}
	return subtle.ConstantTimeCompare([]byte(hash), []byte(auth.HashToken(secret))) == 1, nil
}

// Apps returns the OAuth applications of the owner (ownerID 0: every
// application), in creation order.
func Apps(ctx context.Context, q store.Q, ownerID int64) ([]App, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, owner_id, name, url, client_id, created_at FROM oauth_apps
		WHERE $1 = 0 OR owner_id = $1 ORDER BY id`, ownerID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []App{}
	for rows.Next() {
		var a App
		if err := rows.Scan(&a.ID, &a.OwnerID, &a.Name, &a.URL, &a.ClientID, &a.CreatedAt); err != nil {
			return nil, store.Normalize(err)
		}
		out = append(out, a)
	}
	return out, store.Normalize(rows.Err())
}

// DeleteApp deletes the application; its OAuth tokens and grants go with
// it.
func DeleteApp(ctx context.Context, q store.Q, id int64) error {
	_, err := q.ExecContext(ctx, `DELETE FROM oauth_apps WHERE id = $1`, id)
	return store.Normalize(err)
}

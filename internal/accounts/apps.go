package accounts

import (
	"context"
	"crypto/subtle"
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
	a := &CreatedApp{
		App:          App{OwnerID: ownerID, Name: name, URL: url, ClientID: "Iv1." + auth.RandomString(ClientIDLength-4), CreatedAt: store.Now()},
		ClientSecret: auth.RandomString(40),
	}
	err := q.QueryRowContext(ctx, `
		INSERT INTO oauth_apps (owner_id, name, url, client_id, client_secret_hash, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
		ownerID, name, url, a.ClientID, auth.HashToken(a.ClientSecret), a.CreatedAt).Scan(&a.ID)
	return a, store.Normalize(err)
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

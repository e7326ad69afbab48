package repository_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/blob"
	"forgeapi/internal/orgmigration"
	"forgeapi/internal/testwait"
)

// testClock is a server clock that tests move forward.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// archiveExists reports whether the blob store still holds the
// migration's archive.
func archiveExists(t *testing.T, store blob.Store, m migrationJSON) bool {
	t.Helper()
	r, err := store.Open(context.Background(), archiveKey(m))
	if errors.Is(err, blob.ErrNotFound) {
		return false
	}
	apptest.Must(t, "open archive", err)
	r.Close()
	return true
}

// archiveKey is the blob key under which the server stores the
// migration's archive.
func archiveKey(m migrationJSON) string {
	return "migration-" + strconv.FormatInt(m.ID, 10) + "-" + m.GUID + ".tar.gz"
}

// TestDeleteAndExpiry deletes one archive through the API and lets the
// other expire seven days after export under an injected clock; both
// migrations stay listable.
func TestDeleteAndExpiry(t *testing.T) {
	t.Parallel()
	clock := &testClock{}
	f := newFixture(t, apptest.WithClock(clock.now))
	f.pushHistory(f.env.Repo(f.org, "app"), "app")
	deleted := f.start(`{"repositories":["app"]}`)
	expiring := f.start(`{"repositories":["app"]}`)
	f.waitState(deleted.ID, "exported")
	f.waitState(expiring.ID, "exported")
	store := f.env.App.Migrations.Blobs

	resp, err := f.client.Migrations.DeleteMigration(apptest.Ctx(), f.org.Login, deleted.ID)
	if resp == nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE archive: %v", err)
	}
	if archiveExists(t, store, deleted) {
		t.Error("the archive is still stored after DELETE")
	}
	resp, _ = f.client.Migrations.DeleteMigration(apptest.Ctx(), f.org.Login, deleted.ID)
	if apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Errorf("second DELETE archive: %d, want 404", apptest.ResponseStatus(resp))
	}
	if r, _ := f.env.Do("GET", f.path("/migrations/%d/archive", deleted.ID), f.token, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET deleted archive: %d, want 404", r.StatusCode)
	}
	if m := f.get(deleted.ID); m.State != "exported" || m.ArchiveURL != "" {
		t.Errorf("after deletion: state %s archive_url %q", m.State, m.ArchiveURL)
	}

	signed, err := f.client.Migrations.MigrationArchiveURL(apptest.Ctx(), f.org.Login, expiring.ID)
	apptest.Must(t, "archive URL", err)
	clock.advance(orgmigration.ArchiveURLTTL + time.Minute)
	if r, err := http.Get(signed); err != nil || r.StatusCode != http.StatusForbidden {
		t.Errorf("signed URL after its lifetime: %v %v, want 403", r.StatusCode, err)
	}

	clock.advance(orgmigration.ArchiveLifetime)
	if r, _ := f.env.Do("GET", f.path("/migrations/%d/archive", expiring.ID), f.token, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET archive after seven days: %d, want 404", r.StatusCode)
	}
	testwait.Until(t, "the archive's deletion seven days after export", func() bool { return !archiveExists(t, store, expiring) })
	list, _, err := f.client.Migrations.ListMigrations(apptest.Ctx(), f.org.Login, nil)
	apptest.Must(t, "list", err)
	if len(list) != 2 || list[0].GetState() != "exported" || list[1].GetState() != "exported" {
		t.Errorf("migrations after expiry: %v", list)
	}
	if m := f.get(expiring.ID); m.ArchiveURL != "" {
		t.Errorf("archive_url after expiry: %q", m.ArchiveURL)
	}
}

// fakeS3 is an in-process S3-compatible server (gofakes3, in memory)
// with a bucket "archives". It listens on HTTPS, as S3 does. While held,
// it blocks object uploads until released.
type fakeS3 struct {
	endpoint string
	client   *http.Client
	holding  atomic.Bool
	arrived  chan struct{} // closed when a held upload arrives
	release  chan struct{}
	once     sync.Once
}

const bucket = "archives"

func startFakeS3(t *testing.T) *fakeS3 {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	fake := &fakeS3{arrived: make(chan struct{}), release: make(chan struct{})}
	s3 := gofakes3.New(backend).Server()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fake.holding.Load() && (r.Method == http.MethodPut || r.Method == http.MethodPost) {
			fake.once.Do(func() { close(fake.arrived) })
			<-fake.release
			http.Error(w, "held", http.StatusServiceUnavailable)
			return
		}
		s3.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(fake.unhold) // runs before srv.Close, so held requests end
	fake.endpoint = srv.Listener.Addr().String()
	fake.client = srv.Client()
	return fake
}

func (f *fakeS3) unhold() {
	f.holding.Store(false)
	select {
	case <-f.release:
	default:
		close(f.release)
	}
}

// withS3 configures the server's blob storage as the fake's bucket
// (bucketName) through the --blob spec.
func withS3(fake *fakeS3, bucketName string) apptest.Option {
	return func(c *app.Config) {
		c.Blob = "s3://" + bucketName + "?endpoint=" + fake.endpoint + "&region=us-east-1&prefix=forgeapi/"
		c.BlobOptions = blob.Options{S3Transport: fake.client.Transport, Getenv: func(name string) string {
			return map[string]string{"AWS_ACCESS_KEY_ID": "test-key", "AWS_SECRET_ACCESS_KEY": "test-secret"}[name]
		}}
	}
}

// TestS3Backend exports into the S3 backend, downloads through the
// presigned URL the 302 points at, and deletes the archive.
func TestS3Backend(t *testing.T) {
	t.Parallel()
	fake := startFakeS3(t)
	f := newFixture(t, withS3(fake, bucket))
	repo := f.env.Repo(f.org, "app", apptest.RepoOpts{Private: true})
	f.pushHistory(repo, "s3")
	m := f.start(`{"repositories":["app"]}`)
	f.waitState(m.ID, "exported")

	url, err := f.client.Migrations.MigrationArchiveURL(apptest.Ctx(), f.org.Login, m.ID)
	apptest.Must(t, "archive URL", err)
	if !strings.HasPrefix(url, "https://"+fake.endpoint+"/"+bucket+"/forgeapi/migration-") || !strings.Contains(url, "X-Amz-Signature=") {
		t.Fatalf("archive URL %s is not a presigned URL of the bucket", url)
	}
	dir, _ := f.download(m.ID, fake.client)
	f.checkClone(dir, repo)
	checkArchiveJSON(t, f, dir, []string{"app"})

	if resp, err := f.client.Migrations.DeleteMigration(apptest.Ctx(), f.org.Login, m.ID); apptest.ResponseStatus(resp) != 204 {
		t.Fatalf("DELETE archive: %v", err)
	}
	if archiveExists(t, f.env.App.Migrations.Blobs, m) {
		t.Error("the archive is still in the bucket after DELETE")
	}
}

// TestNoBlobStorage checks rule 3: without usable blob storage, POST
// answers 422 with a clear message, and nothing is created or locked.
func TestNoBlobStorage(t *testing.T) {
	t.Parallel()
	fake := startFakeS3(t)
	f := newFixture(t, withS3(fake, "no-such-bucket"))
	f.env.Repo(f.org, "app")
	resp, data := f.env.DoJSON("POST", f.path("/migrations"), f.token, `{"repositories":["app"],"lock_repositories":true}`)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(data), "blob storage provider must be configured") {
		t.Fatalf("POST without blob storage: %d %s", resp.StatusCode, data)
	}
	if strings.Contains(string(data), "no-such-bucket") {
		t.Errorf("the 422 leaks the storage configuration: %s", data)
	}
	if repoByName(t, f, "app").MigrationLocked {
		t.Error("a refused migration locked the repository")
	}
	if list, _, err := f.client.Migrations.ListMigrations(apptest.Ctx(), f.org.Login, nil); err != nil || len(list) != 0 {
		t.Errorf("migrations after refusal: %v %v", list, err)
	}
}

// TestCrashDuringExport stops the server while an export is uploading
// (the migration exporting under a live lease), leaves a broken object
// under the archive key, and restarts on the same data and database with
// the clock past the lease: the new server claims the export again and
// writes a complete archive over the broken one.
func TestCrashDuringExport(t *testing.T) {
	t.Parallel()
	fake := startFakeS3(t)
	fake.holding.Store(true)
	f := newFixture(t, withS3(fake, bucket))
	repo := f.env.Repo(f.org, "app")
	f.pushHistory(repo, "crash")
	m := f.start(`{"repositories":["app"],"lock_repositories":true}`)
	select {
	case <-fake.arrived:
	case <-time.After(time.Minute):
		t.Fatal("the export did not start uploading")
	}
	if got := f.get(m.ID); got.State != "exporting" || got.ArchiveURL != "" {
		t.Fatalf("during upload: state %s archive_url %q, want exporting and none", got.State, got.ArchiveURL)
	}
	for _, method := range []string{"GET", "DELETE"} {
		if r, data := f.env.Do(method, f.path("/migrations/%d/archive", m.ID), f.token, nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("%s archive while exporting: %d %s, want 404", method, r.StatusCode, data)
		}
	}
	cfg := f.env.Config
	f.env.Stop()
	fake.unhold()

	broken, err := blob.Open(cfg.Blob, cfg.BlobOptions)
	apptest.Must(t, "open bucket", err)
	_, err = broken.Put(context.Background(), archiveKey(m), strings.NewReader("half an archive"))
	apptest.Must(t, "write a broken archive", err)

	clock := &testClock{}
	clock.advance(orgmigration.DefaultLease + time.Minute)
	cfg.Now = clock.now
	f.env = apptest.StartConfig(t, cfg)
	f.client = f.env.Client(f.token)
	done := f.waitState(m.ID, "exported")
	if !done.LockRepositories || !repoByName(t, f, "app").MigrationLocked {
		t.Error("the repository lock did not survive the restart")
	}
	var attempts int
	apptest.Must(t, "read attempts", f.env.App.DB.QueryRow(`SELECT attempts FROM org_migrations WHERE id = $1`, m.ID).Scan(&attempts))
	if attempts != 2 {
		t.Errorf("attempts = %d, want 2 (one interrupted, one completed)", attempts)
	}
	dir, _ := f.download(m.ID, fake.client)
	f.checkClone(dir, repo)
	checkArchiveJSON(t, f, dir, []string{"app"})
}

// TestLeaseNotExpired checks that a restart on PostgreSQL does not take
// over an export whose lease is still live (another server may be
// working on it), while it exports migrations started later. On SQLite,
// whose one server knows the lease holder gone, the restart ends the
// lease and exports the migration again.
func TestLeaseNotExpired(t *testing.T) {
	t.Parallel()
	fake := startFakeS3(t)
	fake.holding.Store(true)
	f := newFixture(t, withS3(fake, bucket))
	f.env.Repo(f.org, "app")
	f.env.Repo(f.org, "other")
	m := f.start(`{"repositories":["app"]}`)
	select {
	case <-fake.arrived:
	case <-time.After(time.Minute):
		t.Fatal("the export did not start uploading")
	}
	cfg := f.env.Config
	f.env.Stop()
	fake.unhold()

	f.env = apptest.StartConfig(t, cfg) // the same clock: the lease is live for two more minutes
	later := f.start(`{"repositories":["other"]}`)
	f.waitState(later.ID, "exported")
	wantState, wantAttempts := "exporting", 1
	if !apptest.Postgres() {
		f.waitState(m.ID, "exported")
		wantState, wantAttempts = "exported", 2
	}
	var state string
	var attempts int
	apptest.Must(t, "read state", f.env.App.DB.QueryRow(`SELECT state, attempts FROM org_migrations WHERE id = $1`, m.ID).Scan(&state, &attempts))
	if state != wantState || attempts != wantAttempts {
		t.Errorf("after a restart within the lease: %s, %d attempts; want %s, %d", state, attempts, wantState, wantAttempts)
	}
}

// TestExportFailure makes an export fail (the repository's git data is
// gone) and checks the failed state, the stored reason, and that the
// client sees neither the reason nor an archive.
func TestExportFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	repo := f.env.Repo(f.org, "broken")
	apptest.Must(t, "remove git data", os.RemoveAll(f.env.App.Repos.GitDir(repo.ID)))
	m := f.start(`{"repositories":["broken"]}`)
	f.waitState(m.ID, "failed")
	var reason string
	apptest.Must(t, "read reason", f.env.App.DB.QueryRow(`SELECT failure_reason FROM org_migrations WHERE id = $1`, m.ID).Scan(&reason))
	if !strings.Contains(reason, "broken") {
		t.Errorf("failure_reason = %q, want the cause", reason)
	}
	resp, data := f.env.Do("GET", f.path("/migrations/%d", m.ID), f.token, nil)
	var failed migrationJSON
	mustUnmarshal(t, data, &failed)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(data), reason) || failed.ArchiveURL != "" {
		t.Errorf("failed migration: %d %s", resp.StatusCode, data)
	}
	if r, _ := f.env.Do("GET", f.path("/migrations/%d/archive", m.ID), f.token, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("archive of a failed migration: %d, want 404", r.StatusCode)
	}
}

// TestAbandonedAfterMaxAttempts checks that an export whose servers keep
// dying is marked failed instead of being retried forever.
func TestAbandonedAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	fake := startFakeS3(t)
	fake.holding.Store(true)
	f := newFixture(t, withS3(fake, bucket))
	f.env.Repo(f.org, "app")
	m := f.start(`{"repositories":["app"]}`)
	select {
	case <-fake.arrived:
	case <-time.After(time.Minute):
		t.Fatal("the export did not start uploading")
	}
	cfg := f.env.Config
	f.env.Stop()
	fake.unhold()

	offline, err := app.Open(context.Background(), cfg)
	apptest.Must(t, "open store", err)
	_, err = offline.DB.Exec(`UPDATE org_migrations SET attempts = $1 WHERE id = $2`, orgmigration.DefaultMaxAttempts, m.ID)
	apptest.Must(t, "set attempts", err)
	offline.Close()

	clock := &testClock{}
	clock.advance(orgmigration.DefaultLease + time.Minute)
	cfg.Now = clock.now
	f.env = apptest.StartConfig(t, cfg)
	f.waitState(m.ID, "failed")
}

// TestTwoServers runs two servers on one database and data directory (as
// a PostgreSQL deployment shares them): every export is claimed once.
func TestTwoServers(t *testing.T) {
	if !apptest.Postgres() {
		t.Skip("servers share a database only on PostgreSQL: a second one on SQLite is refused (app's TestSecondServerOnOneSQLiteDatabaseIsRefused)")
	}
	t.Parallel()
	f := newFixture(t)
	cfg := f.env.Config
	second := apptest.StartConfig(t, cfg)
	for _, name := range []string{"a", "b", "c", "d"} {
		f.pushHistory(f.env.Repo(f.org, name), name)
	}
	var ids []int64
	for range 6 {
		ids = append(ids, f.start(`{"repositories":["a","b","c","d"]}`).ID)
	}
	for _, id := range ids {
		f.waitState(id, "exported")
	}
	var claims int
	apptest.Must(t, "count claims", second.App.DB.QueryRow(`SELECT sum(attempts) FROM org_migrations`).Scan(&claims))
	if claims != len(ids) {
		t.Errorf("%d claims for %d exports", claims, len(ids))
	}
	dir, _ := f.download(ids[len(ids)-1], nil)
	f.checkClone(dir, repoByName(t, f, "c"))
}

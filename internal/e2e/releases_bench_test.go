package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// benchAsset is the size of the asset each round moves.
const benchAsset = 32 << 20

// BenchmarkAssetTransfer uploads a 32 MiB asset to forgeapi (at the
// release's upload_url, streamed into the local blob store, hashed) and
// downloads it (the asset API's octet-stream 302, then the signed URL),
// each round beside the bare reference: a net/http server on the same
// machine that writes the POSTed body to a file (synced, as the blob
// store syncs) and serves it back with http.ServeFile. It reports both
// rates and their ratios (upload-ratio, download-ratio: forgeapi's rate
// over the bare one; the target is 0.8 or more).
func BenchmarkAssetTransfer(b *testing.B) {
	env := apptest.Start(b)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	dir := apptest.WorkTree(b, map[string]string{"README.md": "# hello\n"})
	apptest.Git(b, dir, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	rel, _, err := env.Client(token).Repositories.CreateRelease(ctx, "octo", "hello", github.CreateReleaseRequest{TagName: "v1"})
	apptest.Must(b, "release", err)
	bare := bareFileServer(b)
	payload := bytes.Repeat([]byte("0123456789abcdef"), benchAsset/16)
	client := &http.Client{}
	var bareUp, bareDown, forgeUp, forgeDown time.Duration
	b.SetBytes(benchAsset)
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("asset-%d.bin", i)
		bareUp += timed(b, func() { send(b, client, "POST", bare+"/"+name, "", payload, nil) })
		bareDown += timed(b, func() { send(b, client, "GET", bare+"/"+name, "", nil, nil) })
		var asset struct {
			ID int64 `json:"id"`
		}
		upload := env.URL + "/api/uploads/repos/octo/hello/releases/" + itoa(rel.GetID()) + "/assets?name=" + name
		forgeUp += timed(b, func() { send(b, client, "POST", upload, token, payload, &asset) })
		forgeDown += timed(b, func() {
			send(b, client, "GET", env.URL+"/repos/octo/hello/releases/assets/"+itoa(asset.ID), token, nil, nil)
		})
		b.StopTimer()
		send(b, client, "DELETE", env.URL+"/repos/octo/hello/releases/assets/"+itoa(asset.ID), token, nil, nil)
		b.StartTimer()
	}
	mbps := func(d time.Duration) float64 { return float64(benchAsset) * float64(b.N) / d.Seconds() / (1 << 20) }
	b.ReportMetric(mbps(bareUp), "bare-up-MiB/s")
	b.ReportMetric(mbps(forgeUp), "up-MiB/s")
	b.ReportMetric(mbps(bareDown), "bare-down-MiB/s")
	b.ReportMetric(mbps(forgeDown), "down-MiB/s")
	b.ReportMetric(bareUp.Seconds()/forgeUp.Seconds(), "upload-ratio")
	b.ReportMetric(bareDown.Seconds()/forgeDown.Seconds(), "download-ratio")
}

// bareFileServer is the reference: POST /NAME writes the body to a file
// and syncs it, GET /NAME serves it, DELETE is not needed.
func bareFileServer(b *testing.B) string {
	dir := b.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := filepath.Join(dir, filepath.Base(r.URL.Path))
		if r.Method == http.MethodGet {
			http.ServeFile(w, r, p)
			return
		}
		f, err := os.Create(p)
		if err == nil {
			_, err = io.Copy(f, r.Body)
			err = errorsJoin(err, f.Sync(), f.Close())
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// send makes one request with the body (nil: none), reads the answer
// whole (into v when not nil) and fails on a status over 299. A GET
// asks for the bytes (application/octet-stream) and follows redirects.
func send(b *testing.B, client *http.Client, method, url, token string, body []byte, v any) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	apptest.Must(b, "request", err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", "application/octet-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	resp, err := client.Do(req)
	apptest.Must(b, method+" "+url, err)
	defer resp.Body.Close()
	if resp.StatusCode > 299 {
		msg, _ := io.ReadAll(resp.Body)
		b.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, msg)
	}
	if v != nil {
		apptest.Must(b, "decode", json.NewDecoder(resp.Body).Decode(v))
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
}

// timed is how long run takes.
func timed(b *testing.B, run func()) time.Duration {
	start := time.Now()
	run()
	return time.Since(start)
}

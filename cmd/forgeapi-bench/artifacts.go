package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// artifactsBench is the artifacts scenario's configuration.
type artifactsBench struct {
	clusters, items, repos int
	duration               time.Duration
	workers                int
	database, dataDir      string
	cpuProfile             string
}

// clusterRoute is the route pattern the server's latency histogram names
// the cluster call by.
const clusterRoute = "POST /orgs/{org}/artifacts/metadata/deployment-record/cluster/{cluster}"

// runArtifacts measures the cluster call of the artifact metadata API
// (spec endpoint 16; target: a 1000-item call under 250 ms of server
// time on SQLite) on a growing table and under concurrent callers, and
// the listing of one digest's deployment records. Server time is read
// from the server's own latency histogram (GET /metrics on its metrics port): its mean per
// phase and how many calls took at most 250 ms.
func runArtifacts(ctx context.Context, args []string) error {
	var b artifactsBench
	fs := flag.NewFlagSet("artifacts", flag.ContinueOnError)
	fs.IntVar(&b.clusters, "clusters", 100, "clusters recorded before the timed phases, one call each")
	fs.IntVar(&b.items, "items", 1000, "deployments per cluster call (at most 1000)")
	fs.IntVar(&b.repos, "repos", 20, "repositories the deployments name (every other deployment names one)")
	fs.DurationVar(&b.duration, "duration", 5*time.Second, "how long each timed phase runs")
	fs.IntVar(&b.workers, "workers", 4, "concurrent clients of the concurrent phases")
	fs.StringVar(&b.database, "database", "", "postgres://... (default SQLite in -data)")
	fs.StringVar(&b.dataDir, "data", "", "data directory (default a temporary one, removed after)")
	fs.StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed phases to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if b.clusters < b.workers || b.workers < 1 || b.items < 1 || b.items > 1000 || b.repos < 1 {
		return errors.New("want 1 <= -workers <= -clusters, 1 <= -items <= 1000, -repos >= 1")
	}
	if b.dataDir == "" {
		dir, err := os.MkdirTemp("", "forgeapi-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		b.dataDir = dir
	}
	m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", DataDir: b.dataDir, DatabaseURL: b.database,
		Logger: discardLogger()})
	if err != nil {
		return err
	}
	defer m.Close()
	token, err := b.fixture(ctx, m.App)
	if err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	fmt.Printf("database: %s; %d-item cluster calls, %d repositories, %d workers\n\n", m.App.DB.Dialect, b.items, b.repos, b.workers)
	stopProfile, err := startCPUProfile(b.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	return b.measure(ctx, m.URL(), m.MetricsURL(), token)
}

// fixture creates the organization bench-org, its owner and repositories
// r0..rN, and returns the owner's fine-grained token on the organization
// with artifact_metadata:write on all its repositories.
func (b *artifactsBench) fixture(ctx context.Context, a *app.App) (string, error) {
	var owner, org *accounts.Account
	err := a.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if owner, err = accounts.Create(ctx, tx, accounts.NewAccount{Type: accounts.TypeUser, Login: "bench"}); err != nil {
			return err
		}
		if org, err = accounts.Create(ctx, tx, accounts.NewAccount{Type: accounts.TypeOrg, Login: "bench-org"}); err != nil {
			return err
		}
		return accounts.SetMember(ctx, tx, org.ID, owner.ID, accounts.RoleOwner)
	})
	if err != nil {
		return "", err
	}
	for i := range b.repos {
		if _, err := a.Repos.Create(ctx, repos.NewRepository{Owner: org, Name: "r" + strconv.Itoa(i)}, owner); err != nil {
			return "", err
		}
	}
	grant, err := auth.ParseGrant("artifact_metadata:write")
	if err != nil {
		return "", err
	}
	tok, err := auth.CreateToken(ctx, a.DB, auth.TokenSpec{Kind: auth.KindFineGrained, UserID: owner.ID,
		ResourceOwnerID: org.ID, AllRepositories: true, Grant: grant})
	return tok.Value, err
}

// clusterBody is a cluster call of b.items deployments. Deployment i runs
// artifact i/2 (pairs share it) of the variant; even ones name a
// repository.
func (b *artifactsBench) clusterBody(variant int) []byte {
	items := make([]map[string]any, b.items)
	for i := range items {
		items[i] = map[string]any{
			"name": fmt.Sprint("image-", i/2), "digest": benchDigest(i/2, variant), "version": fmt.Sprint("1.", variant),
			"deployment_name": fmt.Sprintf("ns-deploy-%d-container", i), "tags": map[string]string{"team": "shop", "tier": "web"},
			"runtime_risks": []string{"internet-exposed", "sensitive-data"},
		}
		if i%2 == 0 {
			items[i]["service_repository"] = "r" + strconv.Itoa(i/2%b.repos)
		}
	}
	body, _ := json.Marshal(map[string]any{"logical_environment": "prod", "physical_environment": "eu-west", "deployments": items})
	return body
}

func benchDigest(artifact, variant int) string {
	sum := sha256.Sum256([]byte(fmt.Sprint(artifact, "/", variant)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (b *artifactsBench) measure(ctx context.Context, base, metricsURL, token string) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: b.workers * 2}}
	bodies := [][]byte{b.clusterBody(0), b.clusterBody(1)}
	post := func(cluster string, body []byte) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/orgs/bench-org/artifacts/metadata/deployment-record/cluster/"+cluster,
			strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	phase := func(name string, run func() result) error {
		before, err := serverLatency(ctx, client, metricsURL, clusterRoute)
		if err != nil {
			return err
		}
		r := run()
		after, err := serverLatency(ctx, client, metricsURL, clusterRoute)
		if err != nil {
			return err
		}
		fmt.Println(r)
		if d := after.minus(before); d.count > 0 {
			fmt.Printf("%-44s server mean %6.2f ms   %d of %d calls took at most 250 ms of server time\n", "",
				d.sum/float64(d.count)*1000, d.under250, d.count)
		}
		if r.errors > 0 {
			return fmt.Errorf("%s: %d unexpected answers", name, r.errors)
		}
		return nil
	}

	// 1. Insert: b.clusters new clusters, one call each, one after the other.
	err := phase("insert", func() result {
		var lat []time.Duration
		errs := 0
		start := time.Now()
		for c := range b.clusters {
			t0 := time.Now()
			status, err := send(client, post("c"+strconv.Itoa(c), bodies[0]))
			lat = append(lat, time.Since(t0))
			if err != nil || status != http.StatusOK {
				errs++
			}
		}
		return latencies(fmt.Sprintf("cluster insert (%d calls, table grows)", b.clusters), lat, errs, time.Since(start))
	})
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %d deployment records stored\n\n", "", b.clusters*b.items)

	// 2. Update: set existing clusters again with the other digests, by
	// one client and then by b.workers clients, round robin over as many
	// clusters.
	var n atomic.Int64
	update := func(clusters int) func() *http.Request {
		return func() *http.Request {
			i := int(n.Add(1))
			return post("c"+strconv.Itoa(i%clusters), bodies[(i/clusters)%2])
		}
	}
	for _, w := range []int{1, b.workers} {
		name := fmt.Sprintf("cluster update, %d client(s)", w)
		if err := phase(name, func() result { return load(ctx, client, name, w, b.duration, http.StatusOK, update(w)) }); err != nil {
			return err
		}
	}

	// 3. List: the deployment records of one digest (2 per cluster).
	d := benchDigest(0, 0)
	var listed struct {
		TotalCount int `json:"total_count"`
	}
	resp, err := call(ctx, client, "GET", base+"/orgs/bench-org/artifacts/"+d+"/metadata/deployment-records", token, "")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp.body, &listed); err != nil {
		return fmt.Errorf("list: %d %s", resp.status, resp.body)
	}
	name := fmt.Sprintf("list deployment records (%d), %d clients", listed.TotalCount, b.workers)
	r := load(ctx, client, name, b.workers, b.duration, http.StatusOK, func() *http.Request {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/orgs/bench-org/artifacts/"+d+"/metadata/deployment-records", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		return req
	})
	fmt.Println()
	fmt.Println(r)
	return nil
}

// send sends the request and discards the body.
func send(client *http.Client, req *http.Request) (int, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// latencies summarises sequential requests as load does.
func latencies(name string, lat []time.Duration, errs int, elapsed time.Duration) result {
	slices.Sort(lat)
	r := result{name: name, requests: len(lat), errors: errs, elapsed: elapsed}
	if len(lat) > 0 {
		r.p50 = lat[len(lat)/2]
		r.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return r
}

// histogram is a route's latency histogram as the server exposes it.
type histogram struct {
	count, under250 int64
	sum             float64
}

func (h histogram) minus(o histogram) histogram {
	return histogram{count: h.count - o.count, under250: h.under250 - o.under250, sum: h.sum - o.sum}
}

// serverLatency reads the route's request latency histogram from the
// server's Prometheus metrics (metricsURL: http://HOST:PORT/metrics).
func serverLatency(ctx context.Context, client *http.Client, metricsURL, route string) (histogram, error) {
	resp, err := call(ctx, client, "GET", metricsURL, "", "")
	if err != nil {
		return histogram{}, err
	}
	const name = "forgeapi_http_request_duration_seconds"
	label := `route="` + route + `"`
	var h histogram
	sc := bufio.NewScanner(strings.NewReader(string(resp.body)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || !strings.Contains(line, label) {
			continue
		}
		value := line[strings.LastIndexByte(line, ' ')+1:]
		switch {
		case strings.HasPrefix(line, name+"_bucket") && strings.Contains(line, `le="0.25"`):
			h.under250, err = strconv.ParseInt(value, 10, 64)
		case strings.HasPrefix(line, name+"_count"):
			h.count, err = strconv.ParseInt(value, 10, 64)
		case strings.HasPrefix(line, name+"_sum"):
			h.sum, err = strconv.ParseFloat(value, 64)
		}
		if err != nil {
			return histogram{}, fmt.Errorf("metrics line %q: %w", line, err)
		}
	}
	return h, sc.Err()
}

package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/artifacts"
	"forgeapi/internal/httpapi"
)

// BenchmarkConcurrentMaxBodies sends bursts of 20 concurrent requests
// with bodies at the size limits to the real server (in process, on
// SQLite unless FORGEAPI_TEST_POSTGRES_URL is set) and reports the
// memory they take: peak-rss-MB is the process's resident set at its
// highest during the bursts (client and server; the client's bodies are
// one shared buffer), rss-growth-MB that peak over the resident set
// before the burst, peak-heap-MB the Go heap at its highest. The cases:
//
//   - patch-under: PATCH /repos/{owner}/{repo} with a description that
//     fills a body just under 1 MiB (decoded, then refused: 422).
//   - patch-over: the same PATCH one byte over 1 MiB, with a
//     Content-Length (refused unread: 413).
//   - patch-over-chunked: the same sent chunked (read to the limit: 413).
//   - patch-24MB: a 24 MB body, far over the limit (refused unread: 413).
//   - cluster-under: the largest valid artifact cluster batch (3.07 MB;
//     1000 deployments with every field at its limit) padded to just
//     under 4 MiB (recorded: 200).
func BenchmarkConcurrentMaxBodies(b *testing.B) {
	const concurrency = 20
	env := apptest.Start(b)
	octocat := env.User("octocat")
	acme := env.Org("acme", octocat)
	env.Repo(acme, "widgets")
	repoName := strings.Repeat("r", 100)
	env.Repo(acme, repoName)
	token := env.Token(octocat, "repo")
	fgToken := env.FineGrainedToken(octocat, acme, apptest.AllRepos, "artifact_metadata:write")

	patch := func(size int) []byte {
		const frame = len(`{"description":""}`)
		return []byte(`{"description":"` + strings.Repeat("x", size-frame) + `"}`)
	}
	cases := []struct {
		name, method, path, token string
		body                      []byte
		chunked                   bool
		want                      int
	}{
		{"patch-under", "PATCH", "/repos/acme/widgets", token, patch(httpapi.DefaultMaxBody), false, http.StatusUnprocessableEntity},
		{"patch-over", "PATCH", "/repos/acme/widgets", token, patch(httpapi.DefaultMaxBody + 1), false, http.StatusRequestEntityTooLarge},
		{"patch-over-chunked", "PATCH", "/repos/acme/widgets", token, patch(httpapi.DefaultMaxBody + 1), true, http.StatusRequestEntityTooLarge},
		{"patch-24MB", "PATCH", "/repos/acme/widgets", token, patch(24_000_000), false, http.StatusRequestEntityTooLarge},
		{"cluster-under", "POST", "/orgs/acme/artifacts/metadata/deployment-record/cluster/c", fgToken,
			largestClusterBatch(b, repoName, artifacts.MaxClusterBody-1), false, http.StatusOK},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
			var peak memoryPeak
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				debug.FreeOSMemory()
				sampler := startMemorySampler()
				b.StartTimer()
				var wg sync.WaitGroup
				errs := make(chan error, concurrency)
				for range concurrency {
					wg.Go(func() {
						if err := sendBody(client, env.URL, c.method, c.path, c.token, c.body, c.chunked, c.want); err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				peak.add(sampler.stop())
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(len(c.body)), "body-bytes")
			peak.report(b)
		})
	}
}

// sendBody sends one request and checks its status. A refusal of a body
// the server did not read may reach the client as a broken connection
// before its status: that counts as the refusal.
func sendBody(client *http.Client, base, method, path, token string, body []byte, chunked bool, want int) error {
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if chunked {
		req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if want == http.StatusRequestEntityTooLarge {
			return nil
		}
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s (%d bytes): %d %.200s, want %d", method, path, len(body), resp.StatusCode, answer, want)
	}
	return nil
}

// largestClusterBatch is the largest valid cluster batch, padded with
// spaces to size bytes.
func largestClusterBatch(b *testing.B, repo string, size int) []byte {
	tags := map[string]string{}
	for i := range 5 {
		tags[fmt.Sprint(i)+strings.Repeat("k", 127)] = strings.Repeat("v", 256)
	}
	items := make([]map[string]any, 1000)
	for i := range items {
		name := fmt.Sprintf("%04d", i)
		items[i] = map[string]any{
			"name": strings.Repeat("n", 252) + name, "digest": "sha256:" + strings.Repeat("0", 60) + name,
			"version": strings.Repeat("1", 100), "status": "decommissioned", "deployment_name": strings.Repeat("d", 252) + name,
			"service_repository": repo, "tags": tags,
			"runtime_risks": []string{"critical-resource", "internet-exposed", "lateral-movement", "sensitive-data"},
		}
	}
	body, err := json.Marshal(map[string]any{"logical_environment": strings.Repeat("l", 128),
		"physical_environment": strings.Repeat("p", 128), "deployments": items, "return_records": false})
	if err != nil {
		b.Fatal(err)
	}
	if len(body) > size {
		b.Fatalf("the largest batch is %d bytes, over %d", len(body), size)
	}
	return append(body, bytes.Repeat([]byte(" "), size-len(body))...)
}

// memoryPeak is the highest memory seen over the bursts.
type memoryPeak struct {
	rss, growth, heap uint64
}

func (p *memoryPeak) add(q memoryPeak) {
	p.rss, p.growth, p.heap = max(p.rss, q.rss), max(p.growth, q.growth), max(p.heap, q.heap)
}

func (p *memoryPeak) report(b *testing.B) {
	const mb = 1 << 20
	if p.rss > 0 {
		b.ReportMetric(float64(p.rss)/mb, "peak-rss-MB")
		b.ReportMetric(float64(p.growth)/mb, "rss-growth-MB")
	}
	b.ReportMetric(float64(p.heap)/mb, "peak-heap-MB")
}

// memorySampler reads the resident set and the Go heap every
// millisecond until stopped.
type memorySampler struct {
	done chan struct{}
	out  chan memoryPeak
}

func startMemorySampler() *memorySampler {
	s := &memorySampler{done: make(chan struct{}), out: make(chan memoryPeak)}
	baseline := residentBytes()
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var p memoryPeak
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			p.heap = max(p.heap, sample[0].Value.Uint64())
			p.rss = max(p.rss, residentBytes())
			select {
			case <-s.done:
				if p.rss > baseline {
					p.growth = p.rss - baseline
				}
				s.out <- p
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *memorySampler) stop() memoryPeak {
	close(s.done)
	return <-s.out
}

// residentBytes is the process's resident set from /proc/self/statm
// (Linux); 0 where it cannot be read.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

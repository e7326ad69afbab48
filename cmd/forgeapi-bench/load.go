package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// result is what one load run measured.
type result struct {
	name     string
	requests int
	errors   int
	elapsed  time.Duration
	p50, p99 time.Duration
	latency  []time.Duration // sorted
}

func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (r result) String() string {
	return fmt.Sprintf("%-44s %8.0f req/s   p50 %6.2f ms   p99 %6.2f ms   (%d requests, %d unexpected)",
		r.name, r.rps(), ms(r.p50), ms(r.p99), r.requests, r.errors)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// load sends requests made by newReq from `workers` goroutines for d and
// measures latency; a response whose status is not want counts as an
// error.
func load(ctx context.Context, client *http.Client, name string, workers int, d time.Duration, want int, newReq func() *http.Request) result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var all []time.Duration
	errs := 0
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1<<14)
			bad := 0
			for ctx.Err() == nil {
				req := newReq()
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					bad++
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(t0))
				if resp.StatusCode != want {
					bad++
				}
			}
			mu.Lock()
			all = append(all, lat...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	return summarize(name, all, errs, elapsed)
}

// summarize makes the result of the latencies of a run.
func summarize(name string, latency []time.Duration, errs int, elapsed time.Duration) result {
	slices.Sort(latency)
	r := result{name: name, requests: len(latency), errors: errs, elapsed: elapsed, latency: latency}
	if len(latency) > 0 {
		r.p50 = latency[len(latency)/2]
		r.p99 = latency[min(len(latency)-1, len(latency)*99/100)]
	}
	return r
}

// merge combines runs of one measurement (rounds of it) into one result
// with their time added up.
func merge(runs []result) result {
	var latency []time.Duration
	var errs int
	var elapsed time.Duration
	for _, r := range runs {
		latency = append(latency, r.latency...)
		errs += r.errors
		elapsed += r.elapsed
	}
	return summarize(runs[0].name, latency, errs, elapsed)
}

package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// barePayloadBytes is the size of the bare loop's payload, about that of
// a repository event's.
const barePayloadBytes = 4096

// bareLoop sends signed 4 KB repository payloads to the receiver from
// `senders` goroutines for d, as fast as the receiver answers, and
// returns the deliveries per second the receiver took. It is the
// yardstick of the webhooks scenario: what this machine does with a Go
// sender and the same receiver (same HMAC check, same JSON parse, same
// bookkeeping) and no forgeapi between them.
func bareLoop(ctx context.Context, rcv *receiver, hookURL string, senders int, d time.Duration, seq *atomic.Int64) (rate float64, received int64) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	defer client.CloseIdleConnections()
	before := rcv.receivedCount()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				key := "bare-" + strconv.FormatInt(seq.Add(1), 10)
				body := barePayload(key)
				mac := hmac.New(sha256.New, rcv.secret)
				mac.Write(body)
				req, err := http.NewRequest("POST", hookURL+"/0", bytes.NewReader(body))
				if err != nil {
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Service-Event", "repository")
				req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
				rcv.sent(key, time.Now())
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	received = rcv.receivedCount() - before
	return float64(received) / time.Since(start).Seconds(), received
}

// barePayload is a repository event of barePayloadBytes whose repository
// description is key.
func barePayload(key string) []byte {
	head := `{"action":"edited","repository":{"description":"` + key + `"},"padding":"`
	tail := `"}`
	return []byte(head + strings.Repeat("x", max(0, barePayloadBytes-len(head)-len(tail))) + tail)
}

// runCompareBare alternates rounds of the bare loop with rounds of forgeapi
// deliveries (events triggered through the API as fast as the workers
// go, for one round, then drained), prints each round and the ratio of
// the totals, and returns the bare loop's overall rate and how many
// forgeapi deliveries were received.
func (b *webhooksBench) runCompareBare(ctx context.Context, client *http.Client, base string, fx *benchFixture, rcv *receiver, hookURL string) (bareRate float64, forgeN int64) {
	var seq atomic.Int64
	var bareN int64
	var bareT, forgeT float64
	lo, hi := math.Inf(1), math.Inf(-1)
	fmt.Printf("webhooks -compare-bare: %d rounds of %s; bare: %d senders; forgeapi: %d hooks, %d API clients\n",
		b.rounds, b.round, b.bareSenders, b.hooks, b.workers)
	for i := range b.rounds {
		bRate, bN := bareLoop(ctx, rcv, hookURL, b.bareSenders, b.round, &seq)
		bareN += bN
		bareT += float64(bN) / bRate
		f := b.forgeRound(ctx, client, base, fx, rcv)
		forgeN += f.received
		forgeT += f.elapsed.Seconds()
		ratio := f.rate() / bRate
		lo, hi = min(lo, ratio), max(hi, ratio)
		fmt.Printf("  round %d: bare %8.0f deliveries/s   forgeapi %8.0f deliveries/s (%d of %d, %d events, drained in %.2f s)   ratio %.2f   load %s\n",
			i+1, bRate, f.rate(), f.received, f.expected, f.events, f.elapsed.Seconds(), ratio, loadAverage())
	}
	bareRate = float64(bareN) / bareT
	forgeRate := float64(forgeN) / forgeT
	fmt.Printf("  total: bare %.0f deliveries/s, forgeapi %.0f deliveries/s, ratio %.2f (rounds %.2f to %.2f)\n",
		bareRate, forgeRate, forgeRate/bareRate, lo, hi)
	return bareRate, forgeN
}

// forgeRoundResult is one round of forgeapi deliveries.
type forgeRoundResult struct {
	events, expected, received int64
	elapsed                    time.Duration // first API call to last receipt
}

func (r forgeRoundResult) rate() float64 { return float64(r.received) / r.elapsed.Seconds() }

// forgeRound triggers events through the API for one round as fast as
// b.workers clients go and waits (up to b.drain) for their deliveries.
func (b *webhooksBench) forgeRound(ctx context.Context, client *http.Client, base string, fx *benchFixture, rcv *receiver) forgeRoundResult {
	before := rcv.receivedCount()
	var events atomic.Int64
	start := time.Now()
	genCtx, cancel := context.WithTimeout(ctx, b.round)
	defer cancel()
	var wg sync.WaitGroup
	for range b.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for genCtx.Err() == nil {
				desc := "round-" + strconv.FormatInt(rcv.nextSeq(), 10)
				rcv.sent(desc, time.Now())
				resp, err := call(ctx, client, "PATCH", base+"/repos/"+fx.owner+"/"+fx.repo, fx.token,
					`{"description":"`+desc+`"}`)
				if err != nil || resp.status != http.StatusOK {
					rcv.unsent(desc)
					continue
				}
				events.Add(1)
			}
		}()
	}
	wg.Wait()
	r := forgeRoundResult{events: events.Load()}
	r.expected = r.events * int64(b.hooks)
	rcv.await(ctx, before+r.expected, b.drain)
	r.received = rcv.receivedCount() - before
	r.elapsed = rcv.lastReceipt().Sub(start)
	return r
}

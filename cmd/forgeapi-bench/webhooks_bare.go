package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// barePayloadBytes is the size of the bare loop's payload, about that of
// a repository event's.
const barePayloadBytes = 4096

// bareKeyPrefix begins the key of every bare delivery.
const bareKeyPrefix = "bare-"

// bareLoop sends the messages msg makes (one per key) to the receiver from
// `senders` goroutines for d, as fast as the receiver answers, and
// returns how many deliveries the receiver took, and in what time. It is the
// yardstick of the webhooks scenario: what this machine does with a Go
// sender and the same receiver (same HMAC check, same key lookup, same
// bookkeeping) and no forgeapi between them.
func bareLoop(ctx context.Context, rcv *receiver, hookURL string, senders int, d time.Duration, seq *atomic.Int64, msg bareMessage) (received int64, elapsed time.Duration) {
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
				key := bareKeyPrefix + strconv.FormatInt(seq.Add(1), 10)
				body, header := msg(key)
				req, err := http.NewRequest("POST", hookURL+"/0", bytes.NewReader(body))
				if err != nil {
					return
				}
				req.Header = header
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
	return rcv.receivedCount() - before, time.Since(start)
}

// bareMessage makes the body and headers of one bare delivery whose
// repository description is key, signed as the message needs.
type bareMessage func(key string) (body []byte, header http.Header)

// flatMessage is the target's yardstick: a repository event of
// barePayloadBytes, one long string in it, with a content type, the event
// and its SHA-256 signature.
func flatMessage(secret []byte) bareMessage {
	return func(key string) ([]byte, http.Header) {
		body := barePayload(key)
		header := http.Header{}
		header.Set("Content-Type", "application/json")
		header.Set("X-Service-Event", "repository")
		header.Set("X-Hub-Signature-256", "sha256="+hexHMAC(sha256.New, secret, body))
		return body, header
	}
}

// sameMessage sends what forgeapi sends: the payload of a delivery the
// receiver kept, the description swapped for key, with that delivery's
// headers, a new delivery GUID, and both signatures made anew. Against it
// the ratio is forgeapi's own cost; against the flat message it also
// counts the receiver reading and parsing forgeapi's larger, nested
// payload and its header lines.
func sameMessage(secret []byte, sample *keptDelivery) bareMessage {
	quotedKey := []byte(strconv.Quote(sample.key))
	return func(key string) ([]byte, http.Header) {
		body := bytes.ReplaceAll(sample.body, quotedKey, []byte(strconv.Quote(key)))
		header := sample.header.Clone()
		guid := uuid.NewString()
		for _, name := range []string{"X-Service-Delivery", "X-Github-Delivery"} {
			header.Set(name, guid)
		}
		header.Set("X-Hub-Signature", "sha1="+hexHMAC(sha1.New, secret, body))
		header.Set("X-Hub-Signature-256", "sha256="+hexHMAC(sha256.New, secret, body))
		return body, header
	}
}

// hexHMAC is the hex HMAC of body with the hash h.
func hexHMAC(h func() hash.Hash, secret, body []byte) string {
	mac := hmac.New(h, secret)
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// barePayload is a repository event of barePayloadBytes whose repository
// description is key.
func barePayload(key string) []byte {
	head := `{"action":"edited","repository":{"description":"` + key + `"},"padding":"`
	tail := `"}`
	return []byte(head + strings.Repeat("x", max(0, barePayloadBytes-len(head)-len(tail))) + tail)
}

// runCompareBare alternates rounds of the bare loop, sending the flat
// message and then the same bytes as forgeapi, with rounds of forgeapi
// deliveries (events triggered through the API as fast as the workers
// go, for one round, then drained), prints each round and the ratios of
// the totals, and returns the overall rates of the flat and the
// same-bytes loop and how many forgeapi deliveries were received.
func (b *webhooksBench) runCompareBare(ctx context.Context, client *http.Client, base string, fx *benchFixture, rcv *receiver, hookURL string) (flatRate, sameRate float64, forgeN int64, err error) {
	sample, err := b.keepSample(ctx, client, base, fx, rcv)
	if err != nil {
		return 0, 0, 0, err
	}
	forgeN = int64(b.hooks)
	var seq atomic.Int64
	var flat, same, forge rateSum
	fmt.Printf("webhooks -compare-bare: %d rounds of %s; bare: %d senders, a flat %d-byte payload, then the same bytes as forgeapi (%d-byte payload, %d header lines); forgeapi: %d hooks, %d API clients\n",
		b.rounds, b.round, b.bareSenders, barePayloadBytes, len(sample.body), len(sample.header), b.hooks, b.workers)
	for i := range b.rounds {
		cpu := processCPU()
		fRate := b.bareRound(ctx, rcv, hookURL, &seq, flatMessage(rcv.secret), &flat, &cpu)
		sRate := b.bareRound(ctx, rcv, hookURL, &seq, sameMessage(rcv.secret, sample), &same, &cpu)
		f := b.forgeRound(ctx, client, base, fx, rcv)
		forgeN += f.received
		forge.addRound(f.received, f.elapsed, &cpu)
		fmt.Printf("  round %d: bare %6.0f/s, same bytes %6.0f/s   forgeapi %6.0f deliveries/s (%d of %d, %d events, drained in %.2f s)   ratio %.2f, %.2f   CPU a delivery %s   load %s\n",
			i+1, fRate, sRate, f.rate(), f.received, f.expected, f.events, f.elapsed.Seconds(), f.rate()/fRate, f.rate()/sRate,
			roundCPUs(&flat, &same, &forge, i), loadAverage())
	}
	fmt.Printf("  total: bare %.0f deliveries/s, same bytes %.0f/s, forgeapi %.0f/s: ratio %.2f (rounds %s), against the same bytes %.2f (rounds %s)\n",
		flat.rate(), same.rate(), forge.rate(), forge.rate()/flat.rate(), forge.ratioRange(&flat), forge.rate()/same.rate(), forge.ratioRange(&same))
	fmt.Printf("  CPU a delivery: bare %.0f µs, same bytes %.0f µs, forgeapi %.0f µs: cost ratio %.2f, against the same bytes %.2f\n",
		flat.cpuPerDelivery(), same.cpuPerDelivery(), forge.cpuPerDelivery(),
		flat.cpuPerDelivery()/forge.cpuPerDelivery(), same.cpuPerDelivery()/forge.cpuPerDelivery())
	return flat.rate(), same.rate(), forgeN, nil
}

// bareRound runs one round of the bare loop sending msg, adds it to sum
// (with the process's CPU time since *cpu) and returns its rate. Then,
// outside the round's CPU window (*cpu moves past it), the receiver
// forgets the loop's deliveries, counted already; a bare sender never
// sends one twice. Kept, the bookkeeping of a few rounds' bare deliveries
// (a map entry each and a map of the hooks seen) would be live heap the
// collector goes through in every later round, and the paced run after
// the rounds would measure that collector's work rather than forgeapi.
func (b *webhooksBench) bareRound(ctx context.Context, rcv *receiver, hookURL string, seq *atomic.Int64, msg bareMessage, sum *rateSum, cpu *time.Duration) float64 {
	n, elapsed := bareLoop(ctx, rcv, hookURL, b.bareSenders, b.round, seq, msg)
	rate := sum.addRound(n, elapsed, cpu)
	rcv.forget(bareKeyPrefix)
	*cpu = processCPU()
	return rate
}

// roundCPUs is round i's CPU a delivery of the three kinds, in µs, for
// the round's line.
func roundCPUs(flat, same, forge *rateSum, i int) string {
	return fmt.Sprintf("%.0f, %.0f, %.0f µs", flat.roundCPU[i], same.roundCPU[i], forge.roundCPU[i])
}

// rateSum adds up rounds of one kind: deliveries, seconds and each
// round's rate, and the CPU the process used in them.
type rateSum struct {
	n, seconds float64
	rounds     []float64
	// cpu is the process's CPU time in the rounds, and roundCPU each
	// round's CPU a delivery in µs: the cost of a delivery, which unlike
	// a rate does not count the time the machine gave to others or left
	// idle (a drain's tail, a round's start).
	cpu      time.Duration
	roundCPU []float64
}

// addRound counts a round of n deliveries in elapsed, which has just
// ended, with the process's CPU time since *since (moved to now), and
// returns its rate.
func (s *rateSum) addRound(n int64, elapsed time.Duration, since *time.Duration) float64 {
	rate := float64(n) / elapsed.Seconds()
	s.n += float64(n)
	s.seconds += elapsed.Seconds()
	s.rounds = append(s.rounds, rate)
	now := processCPU()
	used := now - *since
	*since = now
	s.cpu += used
	s.roundCPU = append(s.roundCPU, microsPer(used, n))
	return rate
}

func (s *rateSum) rate() float64 { return s.n / s.seconds }

// cpuPerDelivery is the CPU a delivery over all rounds, in µs.
func (s *rateSum) cpuPerDelivery() float64 { return microsPer(s.cpu, int64(s.n)) }

// microsPer is d in µs over n (0 when n is 0).
func microsPer(d time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(n)
}

// processCPU is the CPU time, user and system, this process has used (0
// when the system does not say).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ratioRange is the lowest and highest ratio of s's rounds to other's.
func (s *rateSum) ratioRange(other *rateSum) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range s.rounds {
		lo, hi = min(lo, r/other.rounds[i]), max(hi, r/other.rounds[i])
	}
	return fmt.Sprintf("%.2f to %.2f", lo, hi)
}

// keepSample triggers one event through the API and returns the delivery
// the receiver kept of it (hook 0's), once all its deliveries arrived.
func (b *webhooksBench) keepSample(ctx context.Context, client *http.Client, base string, fx *benchFixture, rcv *receiver) (*keptDelivery, error) {
	desc := "sample-" + strconv.FormatInt(rcv.nextSeq(), 10)
	before := rcv.receivedCount()
	rcv.keep(desc)
	rcv.sent(desc, time.Now())
	resp, err := call(ctx, client, "PATCH", base+"/repos/"+fx.owner+"/"+fx.repo, fx.token, `{"description":"`+desc+`"}`)
	if err != nil {
		return nil, err
	}
	if resp.status != http.StatusOK {
		return nil, fmt.Errorf("PATCH the repository: status %d: %s", resp.status, resp.body)
	}
	rcv.await(ctx, before+int64(b.hooks), b.drain)
	if sample := rcv.kept(); sample != nil {
		return sample, nil
	}
	return nil, errors.New("the receiver kept no delivery of the sample event")
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

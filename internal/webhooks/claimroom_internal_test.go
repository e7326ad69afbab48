package webhooks

import "testing"

// TestFullDispatcherClaimsInBatches: a dispatcher holding maxInFlight
// deliveries claims nothing until its sends have freed claimRefill
// places, and is woken then, not at every send that finishes: it
// claimed a few deliveries a transaction, one per send.
func TestFullDispatcherClaimsInBatches(t *testing.T) {
	d := &Dispatcher{inFlight: map[int64]int{1: maxInFlight}, paces: map[int64]*pace{}, freed: make(chan struct{}, 1),
		total: maxInFlight, closing: true} // closing: finish starts nothing waiting
	if n := d.claimRoom(); n != 0 {
		t.Fatalf("a full dispatcher may claim %d", n)
	}
	for i := 1; i <= claimRefill; i++ {
		d.finish(1)
		woken := len(d.freed) == 1
		if want := i == claimRefill; woken != want {
			t.Fatalf("after %d sends finished the claim loop is woken: %v, want %v", i, woken, want)
		}
		if i < claimRefill {
			if n := d.claimRoom(); n != 0 {
				t.Fatalf("after %d sends finished a claim may take %d, want none", i, n)
			}
		}
	}
	if n := d.claimRoom(); n != claimRefill {
		t.Errorf("once woken a claim may take %d, want %d", n, claimRefill)
	}
}

package gitread

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// slop is how many extra commits a walk pops once only excluded commits are
// left in its queue, to tolerate clock skew between commits (git uses 5).
const slop = 5

// commitFlags mark commits during a walk.
type commitFlags uint8

const (
	flagSeen     commitFlags = 1 << iota // queued at least once
	flagExcluded                         // reachable from an excluded tip (or from side 2 in merge-base)
	flagSide1                            // reachable from the first merge-base tip
	flagSide2                            // reachable from the second merge-base tip
	flagStale                            // reachable from a merge-base result
)

// commitQueue is a max-heap of commits ordered by committer date, newest
// first; ties keep insertion order, so the walk is deterministic.
type commitQueue struct {
	items []queuedCommit
	next  int
}

type queuedCommit struct {
	commit *object.Commit
	order  int
}

func (q *commitQueue) Len() int { return len(q.items) }
func (q *commitQueue) Less(i, j int) bool {
	ti, tj := q.items[i].commit.Committer.When, q.items[j].commit.Committer.When
	if !ti.Equal(tj) {
		return ti.After(tj)
	}
	return q.items[i].order < q.items[j].order
}
func (q *commitQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *commitQueue) Push(x any)    { q.items = append(q.items, x.(queuedCommit)) }
func (q *commitQueue) Pop() any {
	last := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return last
}

func (q *commitQueue) push(c *object.Commit) {
	heap.Push(q, queuedCommit{commit: c, order: q.next})
	q.next++
}

func (q *commitQueue) pop() *object.Commit { return heap.Pop(q).(queuedCommit).commit }

// commitGraph holds the flags and parent links of the commits a walk has
// loaded, so that flags can be propagated to commits already visited.
type commitGraph struct {
	r       *Repository
	flags   map[plumbing.Hash]commitFlags
	parents map[plumbing.Hash][]plumbing.Hash
	queue   commitQueue
}

func newCommitGraph(r *Repository) *commitGraph {
	return &commitGraph{
		r:       r,
		flags:   make(map[plumbing.Hash]commitFlags),
		parents: make(map[plumbing.Hash][]plumbing.Hash),
	}
}

// enqueue adds c to the queue with flags unless it was queued before, in
// which case the flags are propagated to it and its visited ancestors.
func (g *commitGraph) enqueue(c *object.Commit, flags commitFlags) {
	if g.flags[c.Hash]&flagSeen != 0 {
		g.propagate(c.Hash, flags)
		return
	}
	g.flags[c.Hash] = flags | flagSeen
	g.parents[c.Hash] = c.ParentHashes
	g.queue.push(c)
}

// propagate ORs flags into hash and every visited ancestor missing them.
func (g *commitGraph) propagate(hash plumbing.Hash, flags commitFlags) {
	stack := []plumbing.Hash{hash}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		f, seen := g.flags[h]
		if !seen || f&flags == flags {
			continue
		}
		g.flags[h] = f | flags
		stack = append(stack, g.parents[h]...)
	}
}

// enqueueParents loads the parents of c and enqueues them with flags.
func (g *commitGraph) enqueueParents(c *object.Commit, flags commitFlags) error {
	for _, ph := range c.ParentHashes {
		if f, seen := g.flags[ph]; seen {
			if f&flags != flags {
				g.propagate(ph, flags)
			}
			continue
		}
		parent, err := g.r.repo.CommitObject(ph)
		if err != nil {
			return fmt.Errorf("gitread: read commit %s: %w", ph, err)
		}
		g.enqueue(parent, flags)
	}
	return nil
}

// paintParents gives the parents of c the flags of c, as git's
// paint_down_to_common does: a parent that gains a flag is queued again
// even when it was popped before, so that a commit reached from both sides
// is found as a common ancestor whatever order equal commit dates put the
// two sides in (otherwise a tip that is an ancestor of the other tip,
// popped first, would be missed and its parent reported instead).
func (g *commitGraph) paintParents(c *object.Commit, flags commitFlags) error {
	for _, ph := range c.ParentHashes {
		f, seen := g.flags[ph]
		if seen && f&flags == flags {
			continue
		}
		parent, err := g.r.repo.CommitObject(ph)
		if err != nil {
			return fmt.Errorf("gitread: read commit %s: %w", ph, err)
		}
		g.flags[ph] = f | flags | flagSeen
		g.queue.push(parent)
	}
	return nil
}

// onlyFlagged reports whether every queued commit carries flag.
func (g *commitGraph) onlyFlagged(flag commitFlags) bool {
	for _, item := range g.queue.items {
		if g.flags[item.commit.Hash]&flag == 0 {
			return false
		}
	}
	return true
}

// rangeHashes returns the commits reachable from head and not from any of
// exclude, newest first by committer date, like `git rev-list head ^exclude...`.
func (r *Repository) rangeHashes(ctx context.Context, head *object.Commit, exclude []*object.Commit) ([]plumbing.Hash, error) {
	g := newCommitGraph(r)
	for _, c := range exclude {
		g.enqueue(c, flagExcluded)
	}
	g.enqueue(head, 0)
	var visited []plumbing.Hash
	extra := slop
	for g.queue.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if g.onlyFlagged(flagExcluded) {
			if extra == 0 {
				break
			}
			extra--
		}
		c := g.queue.pop()
		flags := g.flags[c.Hash] & flagExcluded
		if flags == 0 {
			visited = append(visited, c.Hash)
		}
		if err := g.enqueueParents(c, flags); err != nil {
			return nil, err
		}
	}
	hashes := visited[:0]
	for _, h := range visited {
		if g.flags[h]&flagExcluded == 0 {
			hashes = append(hashes, h)
		}
	}
	return hashes, nil
}

// mergeBaseCandidates paints down from a and b (as git's
// paint_down_to_common does) and returns the common ancestors that no other
// found common ancestor reaches.
func (r *Repository) mergeBaseCandidates(ctx context.Context, a, b *object.Commit) ([]*object.Commit, error) {
	if a.Hash == b.Hash {
		return []*object.Commit{a}, nil
	}
	g := newCommitGraph(r)
	g.enqueue(a, flagSide1)
	g.enqueue(b, flagSide2)
	var found []*object.Commit
	for g.queue.Len() > 0 && !g.onlyFlagged(flagStale) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := g.queue.pop()
		flags := g.flags[c.Hash] & (flagSide1 | flagSide2 | flagStale)
		if flags&(flagSide1|flagSide2) == flagSide1|flagSide2 && flags&flagStale == 0 {
			found = append(found, c)
			flags |= flagStale
			g.flags[c.Hash] |= flagStale
		}
		if err := g.paintParents(c, flags); err != nil {
			return nil, err
		}
	}
	if len(found) < 2 {
		return found, nil
	}
	// Criss-cross histories: keep only bases that no other base reaches.
	bases, err := object.Independents(found)
	if err != nil {
		return nil, fmt.Errorf("gitread: merge base: %w", err)
	}
	return bases, nil
}

package graphql

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// maxPage is the most nodes a connection answers at once, as the
// platform's first and last allow.
const maxPage = 100

// connectionArgs are the paging arguments every connection takes.
type connectionArgs struct {
	First, Last   *int32
	After, Before *string
}

// check refuses paging arguments the platform refuses: neither first
// nor last, a negative one, or more than maxPage. (costOf refuses the
// first and last before a query runs, when it asks for nodes or edges.)
func (a connectionArgs) check(name string) error {
	if a.First == nil && a.Last == nil {
		return &fieldError{typ: "MISSING_PAGINATION_BOUNDARIES", msg: fmt.Sprintf("You must provide a `first` or `last` value to properly paginate the `%s` connection.", name)}
	}
	for arg, n := range map[string]*int32{"first": a.First, "last": a.Last} {
		switch {
		case n == nil:
		case *n < 0:
			return invalid(fmt.Sprintf("`%s` on the `%s` connection cannot be less than zero.", arg, name))
		case *n > maxPage:
			return &fieldError{typ: "EXCESSIVE_PAGINATION", msg: fmt.Sprintf("Requesting %d records on the `%s` connection exceeds the `%s` limit of %d records.", *n, name, arg, maxPage)}
		}
	}
	return nil
}

// unpaged reports that the arguments ask neither first nor last: a
// connection asked so answers its totalCount alone (counted), as the
// platform's do; costOf refuses its nodes and edges before the query
// runs.
func (a connectionArgs) unpaged() bool { return a.First == nil && a.Last == nil }

// checkCounted is check for a connection that is counted when asked
// neither first nor last: it checks the bounds given.
func (a connectionArgs) checkCounted(name string) error {
	if a.unpaged() {
		return nil
	}
	return a.check(name)
}

// invalid is the error of an argument the platform refuses.
func invalid(msg string) error { return &fieldError{typ: "INVALID_ARGUMENTS", msg: msg} }

// cursorPrefix starts every cursor before its base64 encoding.
const cursorPrefix = "cursor:v2:"

// cursorAt is the opaque cursor of the item at index.
func cursorAt(index int) string {
	return base64.StdEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(index)))
}

// indexOf reads a cursor back.
func indexOf(cursor string) (int, error) {
	raw, err := base64.StdEncoding.DecodeString(cursor)
	if err == nil {
		s, ok := strings.CutPrefix(string(raw), cursorPrefix)
		if i, convErr := strconv.Atoi(s); ok && convErr == nil && i >= 0 {
			return i, nil
		}
	}
	return 0, invalid(fmt.Sprintf("`%s` does not appear to be a valid cursor.", cursor))
}

// window is the part [start, end) of a list of total items that the
// paging arguments select: after and before bound it, then first keeps
// its head and last its tail, as the Relay specification pages. It is
// empty when they ask neither first nor last (unpaged: the connection
// is only counted).
func (a connectionArgs) window(total int) (start, end int, err error) {
	if a.unpaged() {
		return 0, 0, nil
	}
	start, end = 0, total
	if a.After != nil {
		i, err := indexOf(*a.After)
		if err != nil {
			return 0, 0, err
		}
		start = min(i+1, total)
	}
	if a.Before != nil {
		i, err := indexOf(*a.Before)
		if err != nil {
			return 0, 0, err
		}
		end = max(min(i, end), start)
	}
	if a.First != nil {
		end = min(end, start+int(*a.First))
	}
	if a.Last != nil {
		start = max(start, end-int(*a.Last))
	}
	return start, end, nil
}

// connection is one page of a list: the nodes of [offset,
// offset+len(nodes)) of total. Every connection type of the schema
// (XConnection with XEdge) resolves through it.
type connection[T any] struct {
	nodes  []T
	offset int
	total  int
	// unpaged, when set, is the error its nodes and edges answer: a
	// list asked without first or last answers only its totalCount.
	unpaged error
}

// paginate pages a whole list as args ask. Lists too long to load whole
// page in their query with window and build the connection with
// pageOf.
func paginate[T any](all []T, args connectionArgs) (*connection[T], error) {
	start, end, err := args.window(len(all))
	if err != nil {
		return nil, err
	}
	return pageOf(all[start:end], start, len(all)), nil
}

// pageOf is the connection of nodes found at offset of total.
func pageOf[T any](nodes []T, offset, total int) *connection[T] {
	return &connection[T]{nodes: nodes, offset: offset, total: total}
}

// counted is the connection of a list of total items asked without
// first or last (as gh asks commits { totalCount }): its totalCount
// answers, its nodes and edges are the platform's error.
func counted[T any](name string, total int) *connection[T] {
	return &connection[T]{total: total, unpaged: connectionArgs{}.check(name)}
}

// pageList pages a whole list as args ask, or counts it when they ask
// neither first nor last (counted).
func pageList[T any](all []T, args connectionArgs, name string) (*connection[T], error) {
	if args.unpaged() {
		return counted[T](name, len(all)), nil
	}
	if err := args.check(name); err != nil {
		return nil, err
	}
	return paginate(all, args)
}

// Nodes are the page's nodes.
func (c *connection[T]) Nodes() (*[]T, error) { return &c.nodes, c.unpaged }

// Edges are the page's nodes with their cursors.
func (c *connection[T]) Edges() (*[]*edge[T], error) {
	out := make([]*edge[T], len(c.nodes))
	for i, n := range c.nodes {
		out[i] = &edge[T]{cursor: cursorAt(c.offset + i), node: n}
	}
	return &out, c.unpaged
}

// TotalCount counts the whole list.
func (c *connection[T]) TotalCount() int32 { return int32(c.total) }

// PageInfo tells where the page stands in the list.
func (c *connection[T]) PageInfo() *pageInfo {
	p := &pageInfo{hasPrevious: c.offset > 0, hasNext: c.offset+len(c.nodes) < c.total}
	if len(c.nodes) > 0 {
		start, end := cursorAt(c.offset), cursorAt(c.offset+len(c.nodes)-1)
		p.start, p.end = &start, &end
	}
	return p
}

// edge is one node of a connection with its cursor.
type edge[T any] struct {
	cursor string
	node   T
}

func (e *edge[T]) Cursor() string { return e.cursor }
func (e *edge[T]) Node() T        { return e.node }

// pageInfo resolves PageInfo.
type pageInfo struct {
	start, end           *string
	hasNext, hasPrevious bool
}

func (p *pageInfo) StartCursor() *string  { return p.start }
func (p *pageInfo) EndCursor() *string    { return p.end }
func (p *pageInfo) HasNextPage() bool     { return p.hasNext }
func (p *pageInfo) HasPreviousPage() bool { return p.hasPrevious }

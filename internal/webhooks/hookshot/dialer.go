package hookshot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Resolver looks up the addresses of a host. *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// guardedDialer connects only to addresses its allow list accepts. It
// resolves the host itself, checks every address, and dials the accepted
// addresses as IP literals, so the address checked is the address dialed
// (a DNS answer that changes between check and dial cannot slip through).
// The socket Control hook checks the final address once more.
type guardedDialer struct {
	allow    *AllowList
	resolver Resolver
	dialer   net.Dialer
}

// DialContext has the signature of http.Transport.DialContext.
func (d *guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := d.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	allowed, refusal := d.filter(host, addrs)
	if len(allowed) == 0 {
		return nil, refusal
	}
	return d.dialFirst(ctx, network, host, port, allowed)
}

func (d *guardedDialer) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{addr}, nil
	}
	addrs, err := d.resolver.LookupNetIP(ctx, ipNetwork(network), host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

// filter splits addrs into those the allow list accepts and, when none is
// accepted, the refusal of the first one.
func (d *guardedDialer) filter(host string, addrs []netip.Addr) ([]netip.Addr, error) {
	var allowed []netip.Addr
	var firstRefusal error
	for _, a := range addrs {
		if err := d.allow.Check(host, a); err != nil {
			if firstRefusal == nil {
				firstRefusal = err
			}
			continue
		}
		allowed = append(allowed, a)
	}
	return allowed, firstRefusal
}

// dialFirst dials addrs in order and returns the first connection made.
func (d *guardedDialer) dialFirst(ctx context.Context, network, host, port string, addrs []netip.Addr) (net.Conn, error) {
	dialer := d.dialer
	dialer.ControlContext = d.control(host)
	var errs []error
	for _, a := range addrs {
		conn, err := dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control returns a socket hook that re-checks the address about to be
// connected, as a last line of defence.
func (d *guardedDialer) control(host string) func(ctx context.Context, network, address string, c syscall.RawConn) error {
	return func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("dial: unexpected address %q", address)
		}
		return d.allow.Check(host, ap.Addr())
	}
}

// ipNetwork maps a dial network to the lookup network of the same family.
func ipNetwork(network string) string {
	switch network {
	case "tcp4", "udp4":
		return "ip4"
	case "tcp6", "udp6":
		return "ip6"
	default:
		return "ip"
	}
}

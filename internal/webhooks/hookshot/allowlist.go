package hookshot

import (
	"fmt"
	"net/netip"
	"path"
	"strings"
)

// Allow-list keywords, as accepted by [ParseAllowList].
const (
	AllowExternal = "external" // public unicast addresses (the default)
	AllowLoopback = "loopback" // 127.0.0.0/8 and ::1
	AllowPrivate  = "private"  // RFC 1918, ULA fc00::/7 and CGNAT 100.64.0.0/10
	AllowAll      = "*"        // every address, including the always-refused ones
)

// AllowList decides which destinations a delivery may connect to. It is the
// parsed form of the --webhook-allowed-hosts list; see [ParseAllowList].
//
// A nil *AllowList behaves like the default list, "external". An AllowList is
// immutable once parsed and safe for concurrent use.
type AllowList struct {
	all      bool
	external bool
	loopback bool
	private  bool
	prefixes []netip.Prefix
	globs    []string
	entries  []string // canonical entries, for String
}

// DefaultAllowList returns the default list: public unicast addresses only.
func DefaultAllowList() *AllowList {
	return &AllowList{external: true, entries: []string{AllowExternal}}
}

// ParseAllowList parses a comma-separated allow list. Entries (case-insensitive,
// surrounding spaces ignored):
//
//   - "external": public unicast addresses;
//   - "loopback": loopback addresses;
//   - "private": RFC 1918, unique local (fc00::/7) and CGNAT (100.64.0.0/10);
//   - a CIDR such as "10.1.0.0/16", or a single IP address: those addresses;
//   - a host name or glob such as "hooks.internal" or "*.internal.example",
//     matched against the host name in the hook URL ("*" matches any run of
//     characters, dots included): that host, whatever it resolves to;
//   - "*": every destination.
//
// The list allows exactly what it names: "loopback" alone allows loopback
// and nothing else, so a development setup usually wants "external,loopback".
// An empty list is the default, "external".
//
// Unspecified (0.0.0.0, ::), "this network" (0.0.0.0/8), broadcast, multicast
// and link-local addresses (169.254.0.0/16, which holds cloud metadata
// services, and fe80::/10), including their IPv4-mapped IPv6 forms, are
// refused even for a matching host glob; only a CIDR that contains them or
// "*" allows them.
func ParseAllowList(list string) (*AllowList, error) {
	a := &AllowList{}
	for _, raw := range strings.Split(list, ",") {
		entry := strings.ToLower(strings.TrimSpace(raw))
		if entry == "" {
			continue
		}
		if err := a.add(entry); err != nil {
			return nil, err
		}
	}
	if len(a.entries) == 0 {
		return DefaultAllowList(), nil
	}
	return a, nil
}

func (a *AllowList) add(entry string) error {
	switch entry {
	case AllowAll:
		a.all = true
	case AllowExternal:
		a.external = true
	case AllowLoopback:
		a.loopback = true
	case AllowPrivate:
		a.private = true
	default:
		canonical, err := a.addAddressOrGlob(entry)
		if err != nil {
			return err
		}
		entry = canonical
	}
	a.entries = append(a.entries, entry)
	return nil
}

// addAddressOrGlob adds a CIDR, IP address or host glob entry and returns
// its canonical spelling.
func (a *AllowList) addAddressOrGlob(entry string) (string, error) {
	if strings.Contains(entry, "/") {
		p, err := netip.ParsePrefix(entry)
		if err != nil {
			return "", fmt.Errorf("allowed hosts: invalid CIDR %q", entry)
		}
		a.prefixes = append(a.prefixes, p.Masked())
		return p.Masked().String(), nil
	}
	if addr, err := netip.ParseAddr(entry); err == nil && addr.Zone() == "" {
		a.prefixes = append(a.prefixes, netip.PrefixFrom(addr, addr.BitLen()))
		return addr.String(), nil
	}
	if !validHostGlob(entry) {
		return "", fmt.Errorf("allowed hosts: invalid entry %q (want external, loopback, private, *, a CIDR or a host name glob)", entry)
	}
	glob := strings.TrimSuffix(entry, ".")
	a.globs = append(a.globs, glob)
	return glob, nil
}

// validHostGlob reports whether s is made of host name characters and "*".
func validHostGlob(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.', r == '*', r == '_':
		default:
			return false
		}
	}
	return strings.Trim(s, ".*") != ""
}

// String returns the list in canonical form, suitable for ParseAllowList.
func (a *AllowList) String() string {
	if a == nil {
		return AllowExternal
	}
	return strings.Join(a.entries, ",")
}

// Check reports whether a delivery to host (the host name or IP literal of the
// hook URL) may connect to addr, an address host resolved to. It returns nil
// or a *RefusedError.
func (a *AllowList) Check(host string, addr netip.Addr) error {
	if a == nil {
		a = DefaultAllowList()
	}
	class := classify(addr)
	if a.all || a.prefixContains(addr) {
		return nil
	}
	if class.alwaysRefused() {
		return &RefusedError{Host: host, Addr: addr, Class: class}
	}
	if a.matchesHost(host) || a.allowsClass(class) {
		return nil
	}
	return &RefusedError{Host: host, Addr: addr, Class: class}
}

func (a *AllowList) prefixContains(addr netip.Addr) bool {
	unmapped := addr.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(addr) || p.Contains(unmapped) {
			return true
		}
	}
	return false
}

func (a *AllowList) matchesHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, g := range a.globs {
		if ok, _ := path.Match(g, host); ok {
			return true
		}
	}
	return false
}

func (a *AllowList) allowsClass(c AddrClass) bool {
	switch c {
	case ClassPublic:
		return a.external
	case ClassLoopback:
		return a.loopback
	case ClassPrivate:
		return a.private
	default:
		return false
	}
}

// RefusedError reports a destination that the allow list refused. Its
// message names the address and its class, never the URL.
type RefusedError struct {
	Host  string     // host name or IP literal from the URL
	Addr  netip.Addr // the resolved address that was refused
	Class AddrClass  // why the address is special, e.g. ClassLoopback
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("address %s is not allowed (%s)", e.Addr, e.Class)
}

// AllowEntry is the allow-list entry that would allow the refused
// address: its class keyword ("loopback", "private", "external"), or for
// the classes no keyword allows (link-local, reserved, ...) the address
// itself, which allows exactly it.
func (e *RefusedError) AllowEntry() string {
	switch e.Class {
	case ClassLoopback:
		return AllowLoopback
	case ClassPrivate:
		return AllowPrivate
	case ClassPublic:
		return AllowExternal
	}
	return e.Addr.Unmap().String()
}

// With returns the list with entry added, as a --webhook-allowed-hosts
// value: "external,loopback" for the default list and "loopback".
func (a *AllowList) With(entry string) string {
	list := a.String()
	if list == "" {
		return entry
	}
	return list + "," + entry
}

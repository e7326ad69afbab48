package hookshot

import "net/netip"

// AddrClass names the kind of an IP address, as the allow list sees it.
type AddrClass string

// Address classes. The first five are always refused unless a CIDR entry or
// "*" allows them.
const (
	ClassUnspecified AddrClass = "unspecified"  // 0.0.0.0, ::
	ClassThisNetwork AddrClass = "this network" // 0.0.0.0/8
	ClassBroadcast   AddrClass = "broadcast"    // 255.255.255.255
	ClassMulticast   AddrClass = "multicast"    // 224.0.0.0/4, ff00::/8
	ClassLinkLocal   AddrClass = "link-local"   // 169.254.0.0/16, fe80::/10 (cloud metadata)
	ClassLoopback    AddrClass = "loopback"     // 127.0.0.0/8, ::1
	ClassPrivate     AddrClass = "private"      // RFC 1918, fc00::/7, 100.64.0.0/10
	ClassReserved    AddrClass = "reserved"     // other special-purpose ranges (documentation, NAT64, 6to4, ...)
	ClassPublic      AddrClass = "public"       // everything else: public unicast
)

func (c AddrClass) alwaysRefused() bool {
	switch c {
	case ClassUnspecified, ClassThisNetwork, ClassBroadcast, ClassMulticast, ClassLinkLocal:
		return true
	}
	return false
}

// Special-purpose ranges (IANA registries) that are neither loopback,
// private nor link-local, and so are not "external" either.
var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")

	reservedPrefixes = []netip.Prefix{
		netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
		netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
		netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
		netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
		netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
		netip.MustParsePrefix("240.0.0.0/4"),     // reserved
		netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
		netip.MustParsePrefix("64:ff9b::/96"),    // NAT64, may embed any IPv4 address
		netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
		netip.MustParsePrefix("100::/64"),        // discard
		netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments (Teredo, ...)
		netip.MustParsePrefix("2001:db8::/32"),   // documentation
		netip.MustParsePrefix("2002::/16"),       // 6to4, embeds an IPv4 address
		netip.MustParsePrefix("3fff::/20"),       // documentation
	}
	globalUnicastV6 = netip.MustParsePrefix("2000::/3")
	thisNetwork     = netip.MustParsePrefix("0.0.0.0/8")
	broadcast       = netip.MustParseAddr("255.255.255.255")
)

// classify returns the class of addr. IPv4-mapped IPv6 addresses are
// classified by the IPv4 address they carry.
func classify(addr netip.Addr) AddrClass {
	a := addr.Unmap()
	switch {
	case !a.IsValid(), a.IsUnspecified():
		return ClassUnspecified
	case a.Is4() && thisNetwork.Contains(a):
		return ClassThisNetwork
	case a == broadcast:
		return ClassBroadcast
	case a.IsMulticast():
		return ClassMulticast
	case a.IsLinkLocalUnicast():
		return ClassLinkLocal
	case a.IsLoopback():
		return ClassLoopback
	case a.IsPrivate(), cgnat.Contains(a):
		return ClassPrivate
	case isReserved(a):
		return ClassReserved
	default:
		return ClassPublic
	}
}

func isReserved(a netip.Addr) bool {
	if a.Is6() && !globalUnicastV6.Contains(a) && !a.IsPrivate() {
		return true
	}
	for _, p := range reservedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

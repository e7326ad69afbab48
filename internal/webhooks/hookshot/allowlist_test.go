package hookshot

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // canonical String(); empty means a parse error is expected
	}{
		{"", "external"},
		{" , ,", "external"},
		{"external", "external"},
		{" External , LOOPBACK ", "external,loopback"},
		{"loopback", "loopback"},
		{"private", "private"},
		{"*", "*"},
		{"10.1.0.0/16", "10.1.0.0/16"},
		{"10.1.2.3/16", "10.1.0.0/16"},
		{"fd00::/8", "fd00::/8"},
		{"192.168.1.7", "192.168.1.7"},
		{"::1", "::1"},
		{"*.Internal.Example", "*.internal.example"},
		{"hooks.example.com.", "hooks.example.com"},
		{"external,*.internal.example,10.0.0.0/8", "external,*.internal.example,10.0.0.0/8"},
		{"10.0.0.0/33", ""},
		{"10.0.0/8", ""},
		{"foo bar", ""},
		{"http://example.com", ""},
		{"*.", ""},
		{"..", ""},
		{"fe80::1%eth0", ""},
		{"external,nope!", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAllowList(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ParseAllowList(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAllowList(%q): %v", tt.in, err)
			}
			if got.String() != tt.want {
				t.Errorf("ParseAllowList(%q).String() = %q, want %q", tt.in, got.String(), tt.want)
			}
			again, err := ParseAllowList(got.String())
			if err != nil || again.String() != tt.want {
				t.Errorf("canonical form does not parse back: %q, %v", again, err)
			}
		})
	}
}

func TestAllowListCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		list  string
		host  string
		addr  string
		class AddrClass // empty: allowed
	}{
		// external (the default) allows public unicast only.
		{"external", "example.com", "93.184.215.14", ""},
		{"external", "example.com", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", ""},
		{"external", "localhost", "127.0.0.1", ClassLoopback},
		{"external", "evil.example", "127.0.0.1", ClassLoopback},
		{"external", "h", "127.8.9.10", ClassLoopback},
		{"external", "h", "::1", ClassLoopback},
		{"external", "h", "::ffff:127.0.0.1", ClassLoopback},
		{"external", "h", "10.0.0.1", ClassPrivate},
		{"external", "h", "172.16.5.4", ClassPrivate},
		{"external", "h", "192.168.0.1", ClassPrivate},
		{"external", "h", "100.64.0.1", ClassPrivate},
		{"external", "h", "fd12:3456::1", ClassPrivate},
		{"external", "h", "169.254.169.254", ClassLinkLocal},
		{"external", "h", "::ffff:169.254.169.254", ClassLinkLocal},
		{"external", "h", "fe80::1", ClassLinkLocal},
		{"external", "h", "0.0.0.0", ClassUnspecified},
		{"external", "h", "::", ClassUnspecified},
		{"external", "h", "0.1.2.3", ClassThisNetwork},
		{"external", "h", "255.255.255.255", ClassBroadcast},
		{"external", "h", "224.0.0.1", ClassMulticast},
		{"external", "h", "ff02::1", ClassMulticast},
		{"external", "h", "192.0.2.1", ClassReserved},
		{"external", "h", "2001:db8::1", ClassReserved},
		{"external", "h", "64:ff9b::7f00:1", ClassReserved},
		{"external", "h", "2002:7f00:1::1", ClassReserved},
		{"external", "h", "fec0::1", ClassReserved},
		// a nil list is the default.
		{"", "h", "127.0.0.1", ClassLoopback},
		// loopback allows loopback and nothing else.
		{"loopback", "h", "127.0.0.1", ""},
		{"loopback", "h", "::1", ""},
		{"loopback", "h", "::ffff:127.0.0.1", ""},
		{"loopback", "h", "93.184.215.14", ClassPublic},
		{"loopback", "h", "10.0.0.1", ClassPrivate},
		{"loopback,private", "h", "::ffff:169.254.169.254", ClassLinkLocal},
		// private.
		{"private", "h", "10.0.0.1", ""},
		{"private", "h", "100.127.255.255", ""},
		{"private", "h", "fc00::1", ""},
		{"private", "h", "127.0.0.1", ClassLoopback},
		// CIDRs allow what they contain, even the always-refused classes.
		{"10.1.0.0/16", "h", "10.1.200.3", ""},
		{"10.1.0.0/16", "h", "10.2.0.1", ClassPrivate},
		{"169.254.169.254/32", "h", "169.254.169.254", ""},
		{"127.0.0.0/8", "h", "::ffff:127.0.0.1", ""},
		{"192.168.1.7", "h", "192.168.1.7", ""},
		// host globs allow a host whatever it resolves to, except the always-refused.
		{"*.internal.example", "ci.internal.example", "10.0.0.7", ""},
		{"*.internal.example", "a.b.internal.example", "127.0.0.1", ""},
		{"*.internal.example", "CI.Internal.Example.", "127.0.0.1", ""},
		{"*.internal.example", "internal.example", "127.0.0.1", ClassLoopback},
		{"*.internal.example", "ci.internal.example.evil", "127.0.0.1", ClassLoopback},
		{"*.internal.example", "ci.internal.example", "169.254.169.254", ClassLinkLocal},
		{"hooks.local", "hooks.local", "192.168.3.3", ""},
		// * allows everything.
		{"*", "h", "169.254.169.254", ""},
		{"*", "h", "0.0.0.0", ""},
		{"*", "h", "127.0.0.1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.list+"/"+tt.host+"/"+tt.addr, func(t *testing.T) {
			t.Parallel()
			var list *AllowList
			if tt.list != "" {
				var err error
				if list, err = ParseAllowList(tt.list); err != nil {
					t.Fatal(err)
				}
			}
			addr := netip.MustParseAddr(tt.addr)
			err := list.Check(tt.host, addr)
			if tt.class == "" {
				if err != nil {
					t.Fatalf("Check(%q, %s) under %q = %v, want allowed", tt.host, addr, tt.list, err)
				}
				return
			}
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("Check(%q, %s) under %q = %v, want *RefusedError", tt.host, addr, tt.list, err)
			}
			if refused.Class != tt.class || refused.Addr != addr || refused.Host != tt.host {
				t.Errorf("refusal = %+v, want class %q for %s", refused, tt.class, addr)
			}
			if !strings.Contains(err.Error(), addr.String()) {
				t.Errorf("message %q does not name the address", err)
			}
		})
	}
}

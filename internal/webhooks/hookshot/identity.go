package hookshot

import "strconv"

// Identity is what a delivery's identity headers say: the delivery's GUID,
// its event, its hook and the hook's installation target.
type Identity struct {
	DeliveryGUID, Event string
	HookID, TargetID    int64
	TargetType          TargetType
}

// IdentitySets name sets of identity headers, a bit a set: those a
// delivery log entry leaves out of its stored headers, because its row
// and hook say the same (see Headers.AppendStoredJSON). 0 is none.
type IdentitySets uint8

// The identity header sets, by the names they are sent under.
const (
	ServiceIdentity  IdentitySets = 1 << iota // X-Service-Delivery and the rest
	PlatformIdentity                          // X-GitHub-Delivery and the rest
)

// identitySets are the sets in bit order, each with its header names in
// the order of Identity.values.
var identitySets = [...]struct {
	set   IdentitySets
	names [5]string
}{
	{ServiceIdentity, [5]string{HeaderDelivery, HeaderEvent, HeaderHookID, HeaderInstallationTargetID,
		HeaderInstallationTargetType}},
	{PlatformIdentity, [5]string{PlatformHeaderDelivery, PlatformHeaderEvent, PlatformHeaderHookID,
		PlatformHeaderInstallationTargetID, PlatformHeaderInstallationTargetType}},
}

// values are the identity headers' values, in the order of identitySets'
// names.
func (id Identity) values() [5]string {
	return [5]string{id.DeliveryGUID, id.Event, strconv.FormatInt(id.HookID, 10), strconv.FormatInt(id.TargetID, 10),
		string(id.TargetType)}
}

// carriedSets are the identity sets h carries whole, each header with
// id's value.
func (h Headers) carriedSets(id Identity) IdentitySets {
	values := id.values()
	var carried IdentitySets
	for _, s := range identitySets {
		whole := true
		for i, name := range s.names {
			if v, ok := h.Get(name); !ok || v != values[i] {
				whole = false
				break
			}
		}
		if whole {
			carried |= s.set
		}
	}
	return carried
}

// AppendStoredJSON appends the request.headers object the delivery log
// stores for h: h less the identity header sets it carries whole with
// id's values, which it returns. AddIdentity adds them back when the log
// is read, from the delivery's row and hook: left out, a logged delivery
// is about 40% smaller, and cheaper to write.
func (h Headers) AppendStoredJSON(b []byte, id Identity) ([]byte, IdentitySets) {
	implied := h.carriedSets(id)
	var leftOut [2 * 5]string
	left := leftOut[:0]
	for _, s := range identitySets {
		if implied&s.set != 0 {
			left = append(left, s.names[:]...)
		}
	}
	return h.appendJSON(b, left), implied
}

// AddIdentity adds to m the identity headers of sets, with id's values:
// what AppendStoredJSON left out.
func AddIdentity(m map[string]string, sets IdentitySets, id Identity) {
	values := id.values()
	for _, s := range identitySets {
		if sets&s.set == 0 {
			continue
		}
		for i, name := range s.names {
			m[name] = values[i]
		}
	}
}

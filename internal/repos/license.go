package repos

import "forgeapi/internal/reference"

// otherLicenseNodeID is the node id the platform gives the "other"
// license.
const otherLicenseNodeID = "MDc6TGljZW5zZTA="

// LicenseOf is the license object of a detected license key (see
// Stats.LicenseKey): the license of the platform's list with its API
// URL, the platform's "other" (spdx_id NOASSERTION, no URL) for a
// license file it does not recognise, nil for "" (no license).
func LicenseOf(base, key string) *License {
	if key == "" {
		return nil
	}
	if t, err := reference.Load(); err == nil {
		if l := t.License(key); l != nil {
			u := base + "/licenses/" + l.Key
			return &License{Key: l.Key, Name: l.Name, SpdxID: l.SPDXID, URL: &u, NodeID: reference.LicenseNodeID(l.Key)}
		}
	}
	return &License{Key: "other", Name: "Other", SpdxID: "NOASSERTION", NodeID: otherLicenseNodeID}
}

package httpapi

import "testing"

func TestMediaTypeValues(t *testing.T) {
	for accept, want := range map[string]string{
		"":                                                  "github.v3; format=json",
		"application/vnd.github+json":                       "github.v3; format=json",
		"application/vnd.service+json":                      "github.v3; format=json",
		"application/vnd.github.v3+json":                    "github.v3; format=json",
		"application/vnd.github.raw+json":                   "github.v3; param=raw; format=json",
		"application/vnd.service.raw":                       "github.v3; param=raw; format=json",
		"application/vnd.github.v3.diff":                    "github.v3; param=diff",
		"application/vnd.service.patch; charset=utf-8":      "github.v3; param=patch",
		"application/vnd.github.sha":                        "github.v3; param=sha",
		"text/html, application/vnd.github.html+json":       "github.v3; param=html; format=json",
		"application/vnd.github.object+json; charset=utf-8": "github.v3; param=object; format=json",
	} {
		service, platform := mediaTypeValues(accept)
		if platform != want || service != "service"+want[len("github"):] {
			t.Errorf("Accept %q: %q and %q, want %q", accept, service, platform, want)
		}
	}
}

package depreview

import (
	"context"
	"errors"
	"testing"
)

// FuzzPackageLock checks that arbitrary package-lock.json content yields
// dependencies or a *ManifestError, never a panic or another error.
func FuzzPackageLock(f *testing.F) {
	f.Add([]byte(`{"lockfileVersion":3,"packages":{"node_modules/@a/b":{"version":"1.0.0","license":"MIT","dev":true}}}`))
	f.Add([]byte(`{"lockfileVersion":1,"dependencies":{"a":{"version":"1.0.0","dependencies":{"b":{"version":"2.0.0"}}}}}`))
	f.Add([]byte(`{"packages":{"node_modules/x":{"version":"1","license":{"type":"ISC"}}}}`))
	f.Add([]byte(`{`))
	ex := NewExtractor()
	f.Fuzz(func(t *testing.T, content []byte) {
		deps, err := ex.Extract(context.Background(), "package-lock.json", content)
		if err != nil {
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a *ManifestError", err)
			}
			return
		}
		for _, d := range deps {
			if d.Ecosystem != EcosystemNPM || d.Name == "" || d.PackageURL == "" {
				t.Fatalf("bad dependency %+v", d)
			}
		}
	})
}

package depreview

import (
	"strings"

	packageurl "github.com/package-url/packageurl-go"
)

// packageURL builds the purl of a dependency following the namespace rules of
// each purl type: npm scopes and composer vendors become the namespace, a
// maven "group:artifact" is split into namespace and name, a Go module path is
// split at its last slash, PyPI names are normalised (PEP 503) and GitHub
// Actions "owner/repo[/path]" become namespace, name and subpath.
// It returns "" when name is empty.
func packageURL(eco Ecosystem, name, version string) string {
	if name == "" {
		return ""
	}
	typ, namespace, pkgName, subpath := purlParts(eco, name)
	return packageurl.NewPackageURL(typ, namespace, pkgName, version, nil, subpath).ToString()
}

// purlParts returns the purl type, namespace, name and subpath of a
// dependency name in ecosystem eco.
func purlParts(eco Ecosystem, name string) (typ, namespace, pkgName, subpath string) {
	switch eco {
	case EcosystemNPM:
		ns, n := splitLast(name, "/")
		return packageurl.TypeNPM, ns, n, ""
	case EcosystemPip:
		return packageurl.TypePyPi, "", normalizePyPIName(name), ""
	case EcosystemMaven:
		ns, n := splitLast(name, ":")
		return packageurl.TypeMaven, ns, n, ""
	case EcosystemGoMod:
		ns, n := splitLast(name, "/")
		return packageurl.TypeGolang, ns, n, ""
	case EcosystemComposer:
		ns, n := splitLast(strings.ToLower(name), "/")
		return packageurl.TypeComposer, ns, n, ""
	case EcosystemRubyGems:
		return packageurl.TypeGem, "", name, ""
	case EcosystemCargo:
		return packageurl.TypeCargo, "", name, ""
	case EcosystemActions:
		parts := strings.SplitN(name, "/", 3)
		if len(parts) < 2 {
			return "githubactions", "", name, ""
		}
		if len(parts) == 3 {
			subpath = parts[2]
		}
		return "githubactions", parts[0], parts[1], subpath
	}
	return string(eco), "", name, ""
}

// splitLast splits s at the last sep; with no sep the namespace is empty.
func splitLast(s, sep string) (namespace, name string) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return "", s
	}
	return s[:i], s[i+len(sep):]
}

// normalizePyPIName returns the PEP 503 normalised form of a Python
// distribution name: lower case, runs of "-", "_" and "." replaced by "-".
func normalizePyPIName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	lastSep := false
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' {
			if !lastSep {
				b.WriteByte('-')
			}
			lastSep = true
			continue
		}
		lastSep = false
		b.WriteRune(r)
	}
	return b.String()
}

// newDependency returns a Dependency with its package URL filled in.
func newDependency(eco Ecosystem, name, version string, scope Scope) Dependency {
	return Dependency{
		Ecosystem:  eco,
		Name:       name,
		Version:    version,
		PackageURL: packageURL(eco, name, version),
		Scope:      scope,
	}
}

package cli

import "testing"

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"2GiB": 2 << 30, "2G": 2 << 30, "2gb": 2 << 30, "500MiB": 500 << 20, "100 MB": 100 << 20,
		"64KiB": 64 << 10, "1048576": 1 << 20, "7B": 7, "1TiB": 1 << 40,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "MiB", "2XB", "1.5GiB", "9000000TiB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

package main

import (
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile to path until stop is called; with
// an empty path it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeAllocProfile writes the allocation profile (everything allocated
// since the start, go tool pprof -sample_index=alloc_space) to path; with
// an empty path it does nothing.
func writeAllocProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

//go:build !unix

package apptest

import "time"

// ProcessCPU is not measured on this platform: it returns 0.
func ProcessCPU() time.Duration { return 0 }

// ChildrenCPU is not measured on this platform: it returns 0.
func ChildrenCPU() time.Duration { return 0 }

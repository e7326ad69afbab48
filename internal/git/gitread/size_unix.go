//go:build unix

package gitread

import (
	"io/fs"
	"syscall"
)

// diskBytes is the disk space a file takes: its blocks, as git
// count-objects counts loose objects.
func diskBytes(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}

//go:build !unix

package gitread

import "io/fs"

// diskBytes is the size of the file where its blocks are not known.
func diskBytes(info fs.FileInfo) int64 { return info.Size() }

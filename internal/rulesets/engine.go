package rulesets

import (
	"context"
	"fmt"
	"path"
	"strings"

	"forgeapi/internal/git/githttp"
)

// Rule types forgeapi enforces: on branches and tags, and on pushes.
var (
	refRules  = []string{"creation", "update", "deletion", "non_fast_forward", "required_linear_history"}
	pushRules = []string{"file_path_restriction", "file_extension_restriction", "max_file_size"}
)

// megabyte is the unit of max_file_size.
const megabyte = 1 << 20

// inspection computes, once per reference update, what the rules read of
// a push: changed paths, new blobs, merge commits, fast-forwardness.
type inspection struct {
	inspect githttp.Inspector
	paths   map[string][]string
	blobs   map[string][]githttp.Blob
}

func newInspection(inspect githttp.Inspector) *inspection {
	return &inspection{inspect: inspect, paths: map[string][]string{}, blobs: map[string][]githttp.Blob{}}
}

// changedPaths are the paths the update's new commits change, and, for a
// branch, those it changes in the branch's files as a whole (a force push
// back to an older commit changes files without new commits).
func (in *inspection) changedPaths(ctx context.Context, u githttp.RefUpdate) ([]string, error) {
	if p, ok := in.paths[u.Ref]; ok {
		return p, nil
	}
	paths, err := in.inspect.ChangedPaths(ctx, u)
	if err != nil {
		return nil, err
	}
	if u.IsBranch() {
		tree, err := in.inspect.TreeChanges(ctx, u)
		if err != nil {
			return nil, err
		}
		paths = append(paths, tree...)
	}
	in.paths[u.Ref] = paths
	return in.paths[u.Ref], nil
}

func (in *inspection) newBlobs(ctx context.Context, u githttp.RefUpdate) ([]githttp.Blob, error) {
	if b, ok := in.blobs[u.Ref]; ok {
		return b, nil
	}
	b, err := in.inspect.NewBlobs(ctx, u)
	in.blobs[u.Ref] = b
	return b, err
}

// violation is the rule's refusal of the update, or "".
func (r Rule) violation(ctx context.Context, in *inspection, u githttp.RefUpdate) (string, error) {
	kind := "branch"
	if u.IsTag() {
		kind = "tag"
	}
	switch r.Type {
	case "creation":
		return when(u.IsCreate(), "Cannot create ref due to creations being restricted."), nil
	case "update":
		return when(!u.IsCreate() && !u.IsDelete(), "Cannot update this protected ref."), nil
	case "deletion":
		return when(u.IsDelete(), "Cannot delete this "+kind+"."), nil
	case "non_fast_forward":
		return r.nonFastForward(ctx, in, u, kind)
	case "required_linear_history":
		merges, err := in.inspect.MergeCommits(ctx, u)
		return when(len(merges) > 0, fmt.Sprintf("This %s must not contain merge commits (found %s).", kind, merges[0:min(1, len(merges))])), err
	case "file_path_restriction":
		return r.pathRestriction(ctx, in, u)
	case "file_extension_restriction":
		return r.extensionRestriction(ctx, in, u)
	case "max_file_size":
		return r.sizeLimit(ctx, in, u)
	}
	return "", nil
}

func when(refused bool, msg string) string {
	if refused {
		return msg
	}
	return ""
}

func (r Rule) nonFastForward(ctx context.Context, in *inspection, u githttp.RefUpdate, kind string) (string, error) {
	if u.IsCreate() || u.IsDelete() {
		return "", nil
	}
	ff, err := in.inspect.IsAncestor(ctx, u.OldSHA, u.NewSHA)
	return when(err == nil && !ff, "Cannot force-push to this "+kind+"."), err
}

func (r Rule) pathRestriction(ctx context.Context, in *inspection, u githttp.RefUpdate) (string, error) {
	paths, err := in.changedPaths(ctx, u)
	if err != nil || r.Parameters == nil {
		return "", err
	}
	hits := matching(paths, func(p string) bool {
		return anyOf(r.Parameters.RestrictedFilePaths, func(pattern string) bool { return Match(pattern, p) })
	})
	return when(len(hits) > 0, "Cannot change the restricted file paths "+
		strings.Join(r.Parameters.RestrictedFilePaths, ", ")+": "+list(hits)+"."), nil
}

func (r Rule) extensionRestriction(ctx context.Context, in *inspection, u githttp.RefUpdate) (string, error) {
	blobs, err := in.newBlobs(ctx, u)
	if err != nil || r.Parameters == nil {
		return "", err
	}
	var hits []string
	for _, b := range blobs {
		ext := path.Ext(b.Path)
		if ext != "" && anyOf(r.Parameters.RestrictedFileExtensions, func(e string) bool {
			return strings.EqualFold(strings.TrimPrefix(strings.TrimPrefix(e, "*"), "."), ext[1:])
		}) {
			hits = append(hits, b.Path)
		}
	}
	return when(len(hits) > 0, "Cannot push files with the restricted extensions "+
		strings.Join(r.Parameters.RestrictedFileExtensions, ", ")+": "+list(hits)+"."), nil
}

func (r Rule) sizeLimit(ctx context.Context, in *inspection, u githttp.RefUpdate) (string, error) {
	blobs, err := in.newBlobs(ctx, u)
	if err != nil || r.Parameters == nil {
		return "", err
	}
	var hits []string
	for _, b := range blobs {
		if b.Size > r.Parameters.MaxFileSize*megabyte {
			hits = append(hits, fmt.Sprintf("%s (%d bytes)", b.Path, b.Size))
		}
	}
	return when(len(hits) > 0, fmt.Sprintf("Cannot push files larger than %d MB: %s.",
		r.Parameters.MaxFileSize, list(hits))), nil
}

func matching(paths []string, pred func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if !seen[p] && pred(p) {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// maxListed bounds the paths a refusal lists.
const maxListed = 10

func list(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s (and %d more)", strings.Join(items[:maxListed], ", "), len(items)-maxListed)
}

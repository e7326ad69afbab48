package githttp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Hook names and the environment variable that carries the channel directory.
const (
	hookPreReceive  = "pre-receive"
	hookPostReceive = "post-receive"
	hookDirEnv      = "FORGEAPI_HOOK_DIR"
	requestFIFO     = "request"
	responseFIFO    = "response"
)

// hookScript is the POSIX sh script installed as hook name. Without
// FORGEAPI_HOOK_DIR (a push that does not come through Server) it accepts.
// Otherwise it writes a call to the request FIFO:
//
//	hook <name>
//	<KEY>=<value>      (the quarantine environment, one per line)
//	                   (blank line)
//	<old> <new> <ref>  (git's stdin, one update per line)
//	.
//
// and reads the verdict from the response FIFO: "line <text>" lines to print
// on stderr (git shows them as "remote: <text>"), then "ok" (exit 0) or any
// other line or end of file (exit 1). Both FIFOs are held open by the server,
// so neither open blocks; when the server has gone the FIFOs are gone too and
// the redirection fails, which rejects the push.
func hookScript(name string) string {
	return `#!/bin/sh
# Installed by forgeapi (githttp.Init); rewritten on every Init.
dir=$` + hookDirEnv + `
[ -n "$dir" ] || exit 0
{
	printf 'hook %s\n' '` + name + `'
	printf 'GIT_OBJECT_DIRECTORY=%s\n' "$GIT_OBJECT_DIRECTORY"
	printf 'GIT_ALTERNATE_OBJECT_DIRECTORIES=%s\n' "$GIT_ALTERNATE_OBJECT_DIRECTORIES"
	printf 'GIT_QUARANTINE_PATH=%s\n' "$GIT_QUARANTINE_PATH"
	printf '\n'
	while IFS= read -r line || [ -n "$line" ]; do printf '%s\n' "$line"; done
	printf '.\n'
} >"$dir/` + requestFIFO + `" || exit 1
while IFS= read -r line; do
	case $line in
	ok) exit 0 ;;
	"line "*) printf '%s\n' "${line#line }" >&2 ;;
	*) exit 1 ;;
	esac
done <"$dir/` + responseFIFO + `"
exit 1
`
}

// hookCall is one hook invocation received over the channel.
type hookCall struct {
	name    string
	env     map[string]string
	updates []RefUpdate
}

// verdict is the answer to a hookCall: lines to print, and whether to accept.
type verdict struct {
	lines  []string
	accept bool
}

// hookChannel is the per-request pair of FIFOs through which the hooks of
// one push talk to the server. The server keeps both FIFOs open read-write
// for the channel's lifetime, so hook-side opens never block and a verdict
// written before the hook opens the response FIFO is not lost.
type hookChannel struct {
	dir      string
	request  *os.File
	response *os.File
	wg       sync.WaitGroup
}

// openHookChannel creates a private directory under tempDir with the two FIFOs.
func openHookChannel(tempDir string) (*hookChannel, error) {
	dir, err := os.MkdirTemp(tempDir, "forgeapi-hook-")
	if err != nil {
		return nil, err
	}
	ch := &hookChannel{dir: dir}
	if ch.request, err = makeFIFO(filepath.Join(dir, requestFIFO)); err == nil {
		ch.response, err = makeFIFO(filepath.Join(dir, responseFIFO))
	}
	if err != nil {
		ch.close()
		return nil, err
	}
	return ch, nil
}

// makeFIFO creates a FIFO and opens it read-write. Opening read-write never
// blocks on Linux, and the descriptor is served by Go's poller, so Close
// interrupts a pending Read.
func makeFIFO(path string) (*os.File, error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("mkfifo %s: %w", path, err)
	}
	return os.OpenFile(path, os.O_RDWR, 0)
}

// serve answers hook calls with answer until the channel is closed. It
// returns at once; close waits for it to finish.
func (ch *hookChannel) serve(answer func(hookCall) verdict) {
	ch.wg.Add(1)
	go func() {
		defer ch.wg.Done()
		in := bufio.NewReader(ch.request)
		for {
			call, err := readHookCall(in)
			if err != nil {
				return // channel closed, or a hook died mid-call
			}
			if _, err := io.WriteString(ch.response, encodeVerdict(answer(call))); err != nil {
				return
			}
		}
	}()
}

// close removes the FIFOs first (so a late hook fails to open them instead
// of blocking), then closes them, which ends serve, and waits for serve.
func (ch *hookChannel) close() {
	_ = os.RemoveAll(ch.dir)
	for _, f := range []*os.File{ch.request, ch.response} {
		if f != nil {
			_ = f.Close()
		}
	}
	ch.wg.Wait()
}

// errMalformedCall means the request FIFO held something the hook script does not write.
var errMalformedCall = errors.New("malformed hook call")

// readHookCall reads one call in the format written by hookScript.
func readHookCall(in *bufio.Reader) (hookCall, error) {
	first, err := readLine(in)
	if err != nil {
		return hookCall{}, err
	}
	name, ok := strings.CutPrefix(first, "hook ")
	if !ok {
		return hookCall{}, errMalformedCall
	}
	call := hookCall{name: name, env: map[string]string{}}
	for {
		line, err := readLine(in)
		if err != nil {
			return hookCall{}, err
		}
		if line == "" {
			break
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return hookCall{}, errMalformedCall
		}
		call.env[key] = value
	}
	for {
		line, err := readLine(in)
		if err != nil {
			return hookCall{}, err
		}
		if line == "." {
			return call, nil
		}
		u, err := parseRefUpdate(line)
		if err != nil {
			return hookCall{}, err
		}
		call.updates = append(call.updates, u)
	}
}

func readLine(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// parseRefUpdate parses git's "<old> <new> <ref>" hook input line.
func parseRefUpdate(line string) (RefUpdate, error) {
	fields := strings.Fields(line)
	if len(fields) != 3 || !isSHA(fields[0]) || !isSHA(fields[1]) || !strings.HasPrefix(fields[2], "refs/") {
		return RefUpdate{}, fmt.Errorf("%w: update line %q", errMalformedCall, line)
	}
	return RefUpdate{OldSHA: fields[0], NewSHA: fields[1], Ref: fields[2]}, nil
}

// encodeVerdict writes v in the format hookScript reads. Message lines are
// stripped of control characters so that they cannot break the framing or
// drive the client's terminal.
func encodeVerdict(v verdict) string {
	var b strings.Builder
	for _, text := range v.lines {
		for _, line := range strings.Split(text, "\n") {
			b.WriteString("line ")
			b.WriteString(stripControl(line))
			b.WriteByte('\n')
		}
	}
	if v.accept {
		b.WriteString("ok\n")
	} else {
		b.WriteString("refuse\n")
	}
	return b.String()
}

func stripControl(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

package githttp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Hook names and the environment variable that tells the hooks they run
// for the Server.
const (
	hookPreReceive  = "pre-receive"
	hookPostReceive = "post-receive"
	hookFDsEnv      = "FORGEAPI_HOOK_FDS"
)

// hookScript is the POSIX sh script installed as hook name. Without
// FORGEAPI_HOOK_FDS (a push that does not come through Server) it accepts.
// Otherwise it talks to the Server over two pipes that git passes down
// from http-backend to the hook as inherited descriptors: it writes a call
// to descriptor 3,
//
//	hook <name>
//	<KEY>=<value>      (the quarantine environment, one per line)
//	                   (blank line)
//	<old> <new> <ref>  (git's stdin, one update per line)
//	.
//
// and reads the verdict from descriptor 4: "line <text>" lines to print on
// stderr (git shows them as "remote: <text>"), then "ok" (exit 0) or any
// other line or end of file (exit 1). Nothing is opened by name, so nothing
// can block: when the server has gone (even killed with SIGKILL) the write
// fails with EPIPE and the read sees end of file, and the hook rejects
// the push at once.
func hookScript(name string) string {
	return `#!/bin/sh
# Installed by forgeapi (githttp.Init); rewritten on every Init.
[ -n "$` + hookFDsEnv + `" ] || exit 0
{
	printf 'hook %s\n' '` + name + `'
	printf 'GIT_OBJECT_DIRECTORY=%s\n' "$GIT_OBJECT_DIRECTORY"
	printf 'GIT_ALTERNATE_OBJECT_DIRECTORIES=%s\n' "$GIT_ALTERNATE_OBJECT_DIRECTORIES"
	printf 'GIT_QUARANTINE_PATH=%s\n' "$GIT_QUARANTINE_PATH"
	printf '\n'
	while IFS= read -r line || [ -n "$line" ]; do printf '%s\n' "$line"; done
	printf '.\n'
} >&3 || exit 1
while IFS= read -r line; do
	case $line in
	ok) exit 0 ;;
	"line "*) printf '%s\n' "${line#line }" >&2 ;;
	*) exit 1 ;;
	esac
done <&4
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

// hookChannel is the per-request pair of pipes through which the hooks of
// one push talk to the server. The hook-side ends go to http-backend as
// descriptors 3 (calls) and 4 (verdicts) and are inherited by
// receive-pack and the hooks; the server keeps the other ends, and is the
// only holder of them, so its death is seen by the hooks as EPIPE or end
// of file. Hooks run one at a time within a push.
type hookChannel struct {
	fromHook, toHook *os.File // the server's ends
	child            [2]*os.File
	wg               sync.WaitGroup
}

// openHookChannel creates the two pipes.
func openHookChannel() (*hookChannel, error) {
	callR, callW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	verdictR, verdictW, err := os.Pipe()
	if err != nil {
		callR.Close()
		callW.Close()
		return nil, err
	}
	return &hookChannel{fromHook: callR, toHook: verdictW, child: [2]*os.File{callW, verdictR}}, nil
}

// childEnds are the descriptors 3 and 4 of http-backend.
func (ch *hookChannel) childEnds() []*os.File { return ch.child[:] }

// closeChildEnds closes the server's copies of the hook-side ends, once
// http-backend has them (or will not start): from then on, calls end
// with end of file when every git process of the push has exited.
func (ch *hookChannel) closeChildEnds() {
	for i, f := range ch.child {
		if f != nil {
			_ = f.Close()
			ch.child[i] = nil
		}
	}
}

// serve answers hook calls with answer until the channel is closed or
// every git process of the push has exited. It returns at once; close
// waits for it to finish.
func (ch *hookChannel) serve(answer func(hookCall) verdict) {
	ch.wg.Add(1)
	go func() {
		defer ch.wg.Done()
		in := bufio.NewReader(ch.fromHook)
		for {
			call, err := readHookCall(in)
			if err != nil {
				return // channel closed, or a hook died mid-call
			}
			if _, err := io.WriteString(ch.toHook, encodeVerdict(answer(call))); err != nil {
				return
			}
		}
	}()
}

// close closes the server's ends, which ends serve (a hook still waiting
// then sees end of file and rejects), and waits for serve.
func (ch *hookChannel) close() {
	ch.closeChildEnds()
	_ = ch.fromHook.Close()
	_ = ch.toHook.Close()
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

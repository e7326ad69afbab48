package githttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// backendCall is one run of `git http-backend` for a request.
type backendCall struct {
	s       *Server
	w       http.ResponseWriter
	r       *http.Request
	req     Request
	service Service
	hook    *hookChannel // nil when the request needs no hooks
	// fullDuplex is set when the answer may be written while the request
	// body is still being read (git's 200 to a POST).
	fullDuplex bool
}

// run runs `git http-backend` as a CGI program and streams the request
// body to it and its response to the client. Unlike net/http/cgi it
// accepts request bodies of unknown length (chunked, as git sends packs
// larger than http.postBuffer): without CONTENT_LENGTH, http-backend reads
// its input to the end. git runs in its own process group, which is killed
// when the request ends (client gone, or response done), and is killed by
// the kernel if the server dies (Pdeathsig; the hooks notice the server's
// death on their own, see hookScript).
func (c *backendCall) run() {
	ctx := c.r.Context()
	backend := c.s.backendPath()
	cmd := exec.CommandContext(ctx, backend[0], backend[1:]...)
	cmd.Dir = c.req.RepoDir
	cmd.Env = c.cgiEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stderr = &stderrLogger{logger: c.s.logger, repoDir: c.req.RepoDir}
	if c.hook != nil {
		cmd.ExtraFiles = c.hook.childEnds()
	}
	stdin, err := cmd.StdinPipe()
	if err == nil {
		var stdout io.ReadCloser
		if stdout, err = cmd.StdoutPipe(); err == nil {
			if err = cmd.Start(); err == nil {
				c.serve(cmd, stdin, stdout)
				return
			}
		}
	}
	if c.hook != nil {
		c.hook.closeChildEnds()
	}
	c.s.logger.ErrorContext(ctx, "githttp: start git http-backend", "repo", c.req.RepoDir, "err", err)
	WriteRefusal(c.w, http.StatusInternalServerError, "internal server error")
}

// serve feeds the started http-backend and relays its answer.
func (c *backendCall) serve(cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser) {
	if c.hook != nil {
		c.hook.closeChildEnds() // git holds them now; their closing tells the hooks the server is gone
	}
	rc := http.NewResponseController(c.w)
	fed := make(chan struct{})
	if c.r.Body == nil || c.r.Body == http.NoBody {
		_ = stdin.Close()
		close(fed)
	} else {
		go func() {
			defer close(fed)
			_, _ = io.Copy(stdin, c.r.Body) // EPIPE when git stops reading: its answer says why
			_ = stdin.Close()
		}()
	}
	relayErr := c.relay(rc, stdout)
	if c.s.idleTimeout > 0 {
		_ = rc.SetWriteDeadline(time.Time{}) // the connection may serve more requests
	}
	// Whatever is left of the push's processes goes now: the answer is complete,
	// or the client is gone. The group is not empty (http-backend is not reaped
	// yet), so its id cannot have been reused.
	_ = killGroup(cmd.Process.Pid)
	waitErr := cmd.Wait()
	// The handler must not return while the goroutine reads r.Body. It ends
	// by itself once the body is read; only a client that stopped sending
	// needs unblocking, with a read deadline in the past. That deadline
	// fails the connection's background read too, which cancels the
	// context of every later request on the connection: so never for a
	// body that is merely still being copied (git answered first).
	if !waitClosed(fed, bodyGrace) {
		_ = rc.SetReadDeadline(time.Now())
		<-fed
	}
	if c.fullDuplex {
		finishBody(c.r)
	}
	if relayErr != nil && c.r.Context().Err() == nil {
		c.s.logger.WarnContext(c.r.Context(), "githttp: git http-backend", "repo", c.req.RepoDir, "err", relayErr, "exit", waitErr)
	}
}

// finishBody closes the request body of a full-duplex answer before the
// handler returns, which an HTTP/1 handler that enabled full duplex must
// do when part of the body is unread (git stopped reading: a pack over
// the size limit, a broken pack): net/http closes such a body only after
// the handler, past the point where it stops the connection's background
// read, and when that close reads the body to its end it starts a
// background read that the connection's next request then collides with
// ("invalid concurrent Body.Read call", golang/go#68560). Closed here,
// the body's end starts the background read while net/http can still stop
// it. Close reads at most 256 KiB of what is left, as net/http would; a
// longer rest closes the connection after the answer instead.
func finishBody(r *http.Request) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
}

// bodyGrace is how long a finished backend call waits for the request
// body's copy to end before it treats the client as stalled.
const bodyGrace = 2 * time.Second

// waitClosed reports whether ch is closed within d.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

// errNoCGIHeader means http-backend ended before writing its response header.
var errNoCGIHeader = errors.New("http-backend wrote no CGI header")

// relay copies http-backend's CGI response to the client, flushing as git
// writes (progress and keepalive packets must reach the client at once).
func (c *backendCall) relay(rc *http.ResponseController, stdout io.Reader) error {
	br := bufio.NewReaderSize(stdout, 32<<10)
	header, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		WriteRefusal(c.w, http.StatusInternalServerError, "internal server error")
		return fmt.Errorf("%w: %v", errNoCGIHeader, err)
	}
	status := http.StatusOK
	if s := header.Get("Status"); s != "" {
		code, _, _ := strings.Cut(s, " ")
		if status, err = strconv.Atoi(code); err != nil || status < 100 || status > 999 {
			WriteRefusal(c.w, http.StatusInternalServerError, "internal server error")
			return fmt.Errorf("http-backend status %q", s)
		}
		header.Del("Status")
	}
	for k, v := range header {
		c.w.Header()[k] = v
	}
	if c.r.Method == http.MethodPost && status == http.StatusOK {
		// Git reads the body while it writes the answer (progress, keepalives):
		// by default an HTTP/1 handler's first write would discard the unread
		// body. Git's refusals (415 for a wrong Content-Type, 4xx, 5xx) come
		// before it reads: for them net/http does discard what is left, up to
		// 256 KiB, or answers "Connection: close", so that the rest is never
		// read as the next request.
		_ = rc.EnableFullDuplex()
		c.fullDuplex = true
	}
	c.w.WriteHeader(status)
	if c.service == ServiceReceivePack && c.r.Method == http.MethodPost && status == http.StatusOK {
		return c.relayPushResult(rc, br)
	}
	return c.copyOut(rc, br)
}

// copyOut copies the rest of br to the client, flushing whenever git
// has written nothing more yet.
func (c *backendCall) copyOut(rc *http.ResponseController, br *bufio.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			if werr := c.write(rc, br, buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// relayPushResult relays receive-pack's answer pkt-line by pkt-line. When
// git refuses a pack over receive.maxInputSize, its sideband message
// ("fatal: pack exceeds maximum allowed size") does not say the limit
// (git 2.39); a progress line that says it is added right after.
func (c *backendCall) relayPushResult(rc *http.ResponseController, br *bufio.Reader) error {
	var head [4]byte
	for {
		if _, err := io.ReadFull(br, head[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		size, err := strconv.ParseUint(string(head[:]), 16, 16)
		if err != nil || size != 0 && size < 4 {
			// Not a pkt-line stream: relay the rest as it is.
			if werr := c.write(rc, br, head[:]); werr != nil {
				return werr
			}
			return c.copyOut(rc, br)
		}
		pkt := make([]byte, max(size, 4))
		copy(pkt, head[:])
		if _, err := io.ReadFull(br, pkt[4:]); err != nil {
			return err
		}
		if err := c.write(rc, br, pkt); err != nil {
			return err
		}
		if len(pkt) > 5 && (pkt[4] == sidebandProgress || pkt[4] == sidebandError) {
			if bytes.Contains(pkt[5:], []byte(packTooLargeMessage)) {
				note := "the push limit of this server is " + humanBytes(c.s.maxPushSize) + ": push less at a time\n"
				if err := c.write(rc, br, sidebandPacket(sidebandProgress, note)); err != nil {
					return err
				}
			}
		}
	}
}

// The sideband bands of git's protocol, and git's message for a pack over
// receive.maxInputSize.
const (
	sidebandProgress    = 2
	sidebandError       = 3
	packTooLargeMessage = "pack exceeds maximum allowed size"
)

// sidebandPacket is a pkt-line carrying text on band.
func sidebandPacket(band byte, text string) []byte {
	return fmt.Appendf(nil, "%04x%c%s", 4+1+len(text), band, text)
}

// humanBytes writes n as git does ("2.00 GiB", "1.00 MiB", "512 bytes").
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// write writes p to the client, giving the write IdleTimeout, and flushes
// when git has written nothing more yet.
func (c *backendCall) write(rc *http.ResponseController, br *bufio.Reader, p []byte) error {
	c.extendWriteDeadline(rc)
	if _, err := c.w.Write(p); err != nil {
		return err
	}
	if br.Buffered() == 0 {
		return rc.Flush()
	}
	return nil
}

// extendWriteDeadline gives the next write IdleTimeout to complete: a
// client that stops reading a long clone is dropped, a slow one is not.
func (c *backendCall) extendWriteDeadline(rc *http.ResponseController) {
	if c.s.idleTimeout > 0 {
		_ = rc.SetWriteDeadline(time.Now().Add(c.s.idleTimeout))
	}
}

// cgiEnv is http-backend's environment: the CGI variables it reads, and
// git's own.
func (c *backendCall) cgiEnv() []string {
	r := c.r
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"GATEWAY_INTERFACE=CGI/1.1",
		"SERVER_PROTOCOL=" + r.Proto,
		"REQUEST_METHOD=" + r.Method,
		"PATH_INFO=" + c.req.SubPath,
		"QUERY_STRING=" + r.URL.RawQuery,
		"REMOTE_USER=" + c.req.RemoteUser,
		"GIT_PROJECT_ROOT=" + c.req.RepoDir,
		"GIT_HTTP_EXPORT_ALL=1",
		"GIT_CONFIG_NOSYSTEM=1",
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		env = append(env, "REMOTE_ADDR="+host)
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		env = append(env, "CONTENT_TYPE="+ct)
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" {
		env = append(env, "HTTP_CONTENT_ENCODING="+ce)
	}
	if r.Method == http.MethodPost && r.ContentLength >= 0 {
		// Without it (a chunked body) http-backend reads to the end of input.
		env = append(env, "CONTENT_LENGTH="+strconv.FormatInt(r.ContentLength, 10))
	}
	if p := r.Header.Get("Git-Protocol"); p != "" && gitProtocolValue.MatchString(p) {
		env = append(env, "GIT_PROTOCOL="+p)
	}
	return append(env, c.s.serviceEnv(c.service, c.req, c.hook != nil)...)
}

// serviceEnv is the part of git's environment that the HTTP and the
// stream transports share: a push's object checks, size limit and reflog
// identity (PushID), and the hooks' descriptors when hooked.
func (s *Server) serviceEnv(service Service, req Request, hooked bool) []string {
	var env []string
	var config []string // key, value, ...
	if service == ServiceReceivePack {
		config = append(config, receiveFsckConfig...)
	}
	if service == ServiceReceivePack && s.maxPushSize > 0 {
		// index-pack and unpack-objects stop reading a pack past the limit
		// and die with "pack exceeds maximum allowed size (<limit>)", which
		// the client shows as a remote: line.
		config = append(config, "receive.maxInputSize", strconv.FormatInt(s.maxPushSize, 10))
	}
	if req.PushID != "" && pushIDValue.MatchString(req.PushID) {
		// Every reference update of the push is written to its reflog with
		// the push's id as the committer email: push recovery reads it.
		env = append(env, "GIT_COMMITTER_EMAIL="+req.PushID)
		config = append(config, "core.logAllRefUpdates", "always")
	}
	env = append(env, gitConfigEnv(config)...)
	if hooked {
		env = append(env, hookFDsEnv+"=3,4")
	}
	return env
}

// receiveFsckConfig has git check every object a push brings as `git fsck
// --strict` does (receive.fsckObjects: index-pack and unpack-objects run
// with --strict), before any reference moves: a tree entry ".git" in any
// case or in its NTFS and HFS+ spellings, "." or "..", an empty name or
// one with a "/", a duplicate or unsorted entry, a .gitmodules that is a
// symbolic link or has a submodule name, url, path or update setting git
// refuses, malformed commits and tags. The client sees git's words:
//
//	remote: error: object 6212...: hasDotgit: contains '.git'
//	remote: fatal: fsck error in packed object
//	error: remote unpack failed: unpack-objects abnormal exit
//	 ! [remote rejected] main -> main (unpacker error)
//
// Two checks are relaxed as the platform relaxes them, for old histories
// that carry them (git.git's own among them): zero-padded file modes and
// the group-writable mode 100664 of early git. One is made stricter: a
// .gitmodules that does not parse as git configuration, which git only
// notes by default.
var receiveFsckConfig = []string{
	"receive.fsckObjects", "true",
	"receive.fsck.zeroPaddedFilemode", "ignore",
	"receive.fsck.badFilemode", "ignore",
	"receive.fsck.gitmodulesParse", "error",
}

// gitConfigEnv passes configuration (key, value, ...) to git through its
// GIT_CONFIG_COUNT environment variables.
func gitConfigEnv(keyValues []string) []string {
	if len(keyValues) == 0 {
		return nil
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(keyValues)/2)}
	for i := 0; i+1 < len(keyValues); i += 2 {
		n := strconv.Itoa(i / 2)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+keyValues[i], "GIT_CONFIG_VALUE_"+n+"="+keyValues[i+1])
	}
	return env
}

// killGroup kills the process group led by pid.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

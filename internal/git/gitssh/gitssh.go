// Package gitssh serves git over SSH (golang.org/x/crypto/ssh): the
// server's ed25519 host key, made at first start and kept in a file;
// public key authentication through the Handler; sessions that run
// git-upload-pack, git-receive-pack or git-upload-archive on
// "owner/repo(.git)" through the
// Handler, and greet a session without a command as the platform does
// ("Hi octo! You've successfully authenticated, but ... does not provide
// shell access."). Passwords, keyboard-interactive, port forwarding and
// any other command are refused. Connections still in their handshake
// and sessions running are bounded (Config).
package gitssh

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Identity is who a key authenticated: Name is what the greeting calls
// them (a login, or owner/repo for a deploy key); Value is the Handler's.
type Identity struct {
	Name  string
	Value any
}

// Command is a git service a session asks for.
type Command struct {
	Service string // "git-upload-pack", "git-receive-pack" or "git-upload-archive"
	// Owner and Repo name the repository, without ".git"; Owner is ""
	// for a one-segment path ("ID.git"), a gist's address.
	Owner, Repo string
	// Protocol is the client's GIT_PROTOCOL ("version=2"), "" for none.
	Protocol string
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
}

// Handler authenticates keys and runs git for the server.
type Handler interface {
	// Authenticate returns who the key is, or nil when no one has it.
	Authenticate(ctx context.Context, key ssh.PublicKey) (*Identity, error)
	// Run serves the command for id and returns git's exit status, or an
	// error whose message the client is shown (the caller adds
	// "ERROR: ").
	Run(ctx context.Context, id *Identity, cmd Command) (int, error)
}

// Config configures a Server.
type Config struct {
	// HostKeyFile holds the server's ed25519 host key (OpenSSH's private
	// key format); it is made at first start.
	HostKeyFile string
	// ServiceName names the service in the greeting ("Service").
	ServiceName string
	// MaxSessions bounds the sessions served at once; beyond it a
	// session is refused. 0 means DefaultMaxSessions.
	MaxSessions int
	// MaxUnauthenticated bounds the connections not yet authenticated;
	// beyond it a new connection is closed at once. 0 means
	// DefaultMaxUnauthenticated.
	MaxUnauthenticated int
	// HandshakeTimeout bounds a connection's handshake and
	// authentication. 0 means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	Logger           *slog.Logger
}

// The defaults of Config.
const (
	DefaultMaxSessions        = 256
	DefaultMaxUnauthenticated = 64
	DefaultHandshakeTimeout   = 30 * time.Second
)

// Server is an SSH server for git.
type Server struct {
	cfg     Config
	handler Handler
	hostKey ssh.Signer
	unauth  chan struct{}
	running chan struct{}

	mu       sync.Mutex
	listener net.Listener
	conns    map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// New returns a Server with the host key of cfg.HostKeyFile, made now if
// the file does not exist.
func New(cfg Config, h Handler) (*Server, error) {
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxUnauthenticated <= 0 {
		cfg.MaxUnauthenticated = DefaultMaxUnauthenticated
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = "Service"
	}
	key, err := LoadOrCreateHostKey(cfg.HostKeyFile)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, handler: h, hostKey: key, unauth: make(chan struct{}, cfg.MaxUnauthenticated),
		running: make(chan struct{}, cfg.MaxSessions), conns: map[net.Conn]struct{}{}}, nil
}

// HostKey is the server's public host key.
func (s *Server) HostKey() ssh.PublicKey { return s.hostKey.PublicKey() }

// LoadOrCreateHostKey reads the ed25519 host key in path, or makes one
// and writes it there (mode 0600, its directory made as needed).
func LoadOrCreateHostKey(path string) (ssh.Signer, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return ssh.ParsePrivateKey(b)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "forgeapi host key")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(priv)
}

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.listener = ln
	s.mu.Unlock()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		select {
		case s.unauth <- struct{}{}:
		default:
			_ = conn.Close() // too many handshakes under way
			continue
		}
		if !s.track(conn) {
			<-s.unauth
			_ = conn.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(conn)
			s.serveConn(conn)
		}()
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// Close stops accepting, closes every connection (ending the git
// processes of their sessions) and waits for their goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	var err error
	if s.listener != nil {
		err = s.listener.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// fingerprintExt is the Permissions extension naming the key a
// connection authenticated with.
const fingerprintExt = "fingerprint"

// serveConn runs one connection: handshake and authentication under the
// handshake timeout and the unauthenticated bound, then its sessions.
func (s *Server) serveConn(conn net.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	identities := map[string]*Identity{} // by fingerprint; this connection's
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			id, err := s.handler.Authenticate(ctx, key)
			if err != nil {
				s.cfg.Logger.Error("gitssh: authenticate", "err", err)
				return nil, errors.New("authentication failed")
			}
			if id == nil {
				return nil, errors.New("unknown key")
			}
			fp := ssh.FingerprintSHA256(key)
			identities[fp] = id
			return &ssh.Permissions{Extensions: map[string]string{fingerprintExt: fp}}, nil
		},
		ServerVersion: "SSH-2.0-forgeapi",
	}
	cfg.AddHostKey(s.hostKey)
	_ = conn.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	sconn, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	<-s.unauth
	if err != nil {
		return
	}
	_ = conn.SetDeadline(time.Time{})
	defer sconn.Close()
	go func() { _ = sconn.Wait(); cancel() }() // a connection gone ends its sessions' git at once
	id := identities[sconn.Permissions.Extensions[fingerprintExt]]
	go ssh.DiscardRequests(reqs)
	var sessions sync.WaitGroup
	defer sessions.Wait()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions are served")
			continue
		}
		select {
		case s.running <- struct{}{}:
		default:
			_ = nc.Reject(ssh.ResourceShortage, "too many sessions; try again in a moment")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			<-s.running
			continue
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			defer func() { <-s.running }()
			s.serveSession(ctx, id, ch, chReqs)
		}()
	}
}

// serveSession answers a session's requests: env (GIT_PROTOCOL only),
// exec of a git service, shell (the greeting); nothing else.
func (s *Server) serveSession(ctx context.Context, id *Identity, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	protocol := ""
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			ok := ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL"
			if ok {
				protocol = kv.Value
			}
			_ = req.Reply(ok, nil)
		case "exec":
			var c struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &c); err != nil {
				_ = req.Reply(false, nil)
				continue
			}
			_ = req.Reply(true, nil)
			go ssh.DiscardRequests(reqs)
			s.exit(ch, s.exec(ctx, id, ch, c.Command, protocol))
			return
		case "shell":
			_ = req.Reply(true, nil)
			go ssh.DiscardRequests(reqs)
			_, _ = fmt.Fprintf(ch.Stderr(), "Hi %s! You've successfully authenticated, but %s does not provide shell access.\n",
				id.Name, s.cfg.ServiceName)
			s.exit(ch, 1)
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

// exec runs a command line and returns its exit status.
func (s *Server) exec(ctx context.Context, id *Identity, ch ssh.Channel, line, protocol string) int {
	cmd, err := ParseCommand(line)
	if err != nil {
		_, _ = fmt.Fprintf(ch.Stderr(), "ERROR: %v\n", err)
		return 1
	}
	cmd.Protocol, cmd.Stdin, cmd.Stdout, cmd.Stderr = protocol, ch, ch, ch.Stderr()
	status, err := s.handler.Run(ctx, id, cmd)
	if err != nil {
		_, _ = fmt.Fprintf(ch.Stderr(), "ERROR: %v\n", err)
		return 1
	}
	return status
}

// exit sends the exit status and closes the channel's output.
func (s *Server) exit(ch ssh.Channel, status int) {
	_ = ch.CloseWrite()
	_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
}

// The git services a session may run.
var services = map[string]string{
	"git-upload-pack": "git-upload-pack", "git upload-pack": "git-upload-pack",
	"git-receive-pack": "git-receive-pack", "git receive-pack": "git-receive-pack",
	"git-upload-archive": "git-upload-archive", "git upload-archive": "git-upload-archive",
}

// errNotFound is what a client naming no repository is told, as one
// naming a missing repository is.
var errNotFound = errors.New("Repository not found.")

// ParseCommand reads the command line git's ssh transport sends:
// "git-upload-pack 'owner/repo.git'" (scp-like addresses), with a
// leading "/" (ssh:// URLs) or "~/", quoted or not; a path of one
// segment ("ID.git", a gist's address) has no Owner. Any other command
// is refused with a message for the client.
func ParseCommand(line string) (Command, error) {
	line = strings.TrimSpace(line)
	for prefix, service := range services {
		arg, ok := strings.CutPrefix(line, prefix+" ")
		if !ok {
			continue
		}
		path, err := unquote(strings.TrimSpace(arg))
		if err != nil {
			return Command{}, err
		}
		path = strings.TrimPrefix(strings.TrimPrefix(path, "~"), "/")
		owner, repo, ok := strings.Cut(strings.TrimSuffix(path, ".git"), "/")
		if !ok {
			owner, repo = "", owner // a gist: ID.git
		} else if owner == "" {
			return Command{}, errNotFound
		}
		if repo == "" || strings.Contains(repo, "/") {
			return Command{}, errNotFound
		}
		return Command{Service: service, Owner: owner, Repo: repo}, nil
	}
	word, _, _ := strings.Cut(line, " ")
	return Command{}, fmt.Errorf("Invalid command %q: only git-upload-pack, git-receive-pack and git-upload-archive are served.", word)
}

// unquote undoes the shell quoting git applies to the path ('...' with
// '\” for a quote), or returns an unquoted word as it is.
func unquote(s string) (string, error) {
	if !strings.HasPrefix(s, "'") {
		if strings.ContainsAny(s, " '\"\\") {
			return "", errNotFound
		}
		return s, nil
	}
	var b strings.Builder
	for len(s) > 0 {
		if s[0] == '\\' && len(s) > 1 {
			b.WriteByte(s[1])
			s = s[2:]
			continue
		}
		if s[0] != '\'' {
			return "", errNotFound
		}
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", errNotFound
		}
		b.WriteString(s[1 : 1+end])
		s = s[2+end:]
	}
	return b.String(), nil
}

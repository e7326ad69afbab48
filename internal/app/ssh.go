package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"golang.org/x/crypto/ssh"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/gists"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitssh"
	"forgeapi/internal/githost"
	"forgeapi/internal/keys"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// sshServer is git over SSH: the protocol's server and its listener.
type sshServer struct {
	server   *gitssh.Server
	listener net.Listener
	addr     string
	done     chan error
}

// SSHPortOf is the port of a listen address (HOST:PORT) of git over SSH,
// as ssh_url names it: 0 for none (empty or without a port).
func SSHPortOf(addr string) int {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return 0
	}
	return n
}

// SSHHostKeyFile is where the SSH host key is kept under the data
// directory.
func SSHHostKeyFile(dataDir string) string {
	return filepath.Join(dataDir, "ssh", "ssh_host_ed25519_key")
}

// listenSSH makes the host key and listens for git over SSH on
// Config.SSHAddr, when set, before the API server is made: the port bound
// (Config.SSHAddr may say 0) is in every ssh_url. serveSSH serves it.
func (m *Main) listenSSH(cfg Config) error {
	if cfg.SSHAddr == "" {
		return nil
	}
	srv, err := gitssh.New(gitssh.Config{HostKeyFile: SSHHostKeyFile(cfg.DataDir), Logger: cfg.Logger},
		sshGit{keys: m.App.Keys, git: m.App.Git, db: m.App.DB, gists: &gists.Handler{Service: m.App.Gists, Git: m.App.Git}})
	if err != nil {
		return fmt.Errorf("ssh host key: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.SSHAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (ssh): %w", cfg.SSHAddr, err)
	}
	m.ssh = &sshServer{server: srv, listener: ln, addr: ln.Addr().String()}
	return nil
}

// serveSSH serves git over SSH on the listener of listenSSH, if any.
func (m *Main) serveSSH(cfg Config) {
	if m.ssh == nil {
		return
	}
	m.ssh.done = make(chan error, 1)
	go func() { m.ssh.done <- m.ssh.server.Serve(m.ssh.listener) }()
	cfg.Logger.Info("serving git over SSH on "+m.ssh.addr, "host_key", ssh.FingerprintSHA256(m.ssh.server.HostKey()))
}

// closeSSH stops git over SSH (its sessions end with their connections),
// or closes the listener of listenSSH when it was never served.
func (m *Main) closeSSH() error {
	if m.ssh == nil {
		return nil
	}
	err := m.ssh.server.Close()
	if m.ssh.done == nil {
		err = errors.Join(err, m.ssh.listener.Close())
	} else if serveErr := <-m.ssh.done; serveErr != nil {
		err = errors.Join(err, serveErr)
	}
	m.ssh = nil
	return err
}

// SSHAddr is the address git over SSH listens on, "" when off.
func (m *Main) SSHAddr() string {
	if m.ssh == nil {
		return ""
	}
	return m.ssh.addr
}

// sshGit is gitssh's Handler: keys from the keys area, git from githost,
// gists' repositories (a one-segment path, "ID.git") decided by the
// gists area as over HTTP.
type sshGit struct {
	keys  *keys.Service
	git   *githost.Handler
	db    *store.DB
	gists *gists.Handler
}

// Authenticate finds the key by its fingerprint (one query): a user's
// key acts as the user (none while the user is suspended); a deploy key as its repository's, whose pushes
// are recorded as by who added it (the repository's owner when that
// account is gone).
func (g sshGit) Authenticate(ctx context.Context, key ssh.PublicKey) (*gitssh.Identity, error) {
	k, err := g.keys.ByFingerprint(ctx, ssh.FingerprintSHA256(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !k.Deploy() {
		u, err := accounts.ByID(ctx, g.db, k.UserID)
		if err != nil {
			return nil, err
		}
		if u.SuspendedAt != nil { // a suspended user's keys open nothing
			return nil, nil
		}
		return &gitssh.Identity{Name: u.Login, Value: sshIdentity{key: k, caller: githost.StreamCaller{Principal: keyPrincipal(u)}}}, nil
	}
	repo, err := repos.ByID(ctx, g.db, k.RepoID)
	if err != nil {
		return nil, err
	}
	pusher := repo.Owner
	if k.AddedBy != "" {
		if u, err := accounts.ByLogin(ctx, g.db, k.AddedBy); err == nil && !u.IsOrg() {
			pusher = u
		}
	}
	return &gitssh.Identity{Name: repo.FullName(), Value: sshIdentity{key: k, caller: githost.StreamCaller{
		Principal: keyPrincipal(pusher), DeployRepoID: repo.ID, DeployWrite: !k.ReadOnly}}}, nil
}

// sshIdentity is the Identity.Value of sshGit: the key and who it is.
type sshIdentity struct {
	key    *keys.Key
	caller githost.StreamCaller
}

func keyPrincipal(u *accounts.Account) *auth.Principal {
	return &auth.Principal{Account: &auth.Account{ID: u.ID, Login: u.Login, Type: u.Type, SiteAdmin: u.SiteAdmin},
		Method: auth.MethodSSHKey}
}

// Run serves a git command through githost, as over HTTP: a repository's
// (owner/repo), or a gist's (a path of one segment, its id).
func (g sshGit) Run(ctx context.Context, id *gitssh.Identity, cmd gitssh.Command) (int, error) {
	who := id.Value.(sshIdentity)
	if err := g.keys.MarkUsed(ctx, who.key); err != nil { // last_used only: git goes on
		g.git.Logger.WarnContext(ctx, "git over SSH: note the key's use", "err", err)
	}
	status, err := g.serve(ctx, who.caller, cmd)
	var apiErr *apierr.Error
	switch {
	case err == nil:
		return status, nil
	case errors.As(err, &apiErr) && apiErr.Status == 404:
		return 0, errors.New("Repository not found.")
	case errors.As(err, &apiErr):
		return 0, errors.New(apiErr.Message)
	case errors.Is(err, githttp.ErrBusy), errors.Is(err, githttp.ErrNoRepository):
		return 0, err
	}
	g.git.Logger.ErrorContext(ctx, "git over SSH", "err", err)
	return 0, errors.New("Internal error.")
}

// serve runs cmd for the caller: on the repository owner/repo, or on the
// gist whose id is a one-segment path.
func (g sshGit) serve(ctx context.Context, caller githost.StreamCaller, cmd gitssh.Command) (int, error) {
	req := githttp.StreamRequest{
		Service: githttp.Service(cmd.Service), Protocol: cmd.Protocol, Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr}
	if cmd.Owner != "" {
		return g.git.ServeStream(ctx, caller, cmd.Owner, cmd.Repo, req)
	}
	return g.git.ServeDirStream(ctx, caller, func(ctx context.Context, p *auth.Principal, service githttp.Service) (githost.DirTarget, error) {
		return g.gists.Access(ctx, p, cmd.Repo, service)
	}, req)
}

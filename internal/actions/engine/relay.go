package engine

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/nektos/act/pkg/container"
)

// A job container with services is on the services' network (act makes
// one per job, so that the steps reach the services by their ids), not
// on the host's: there the server's URLs on a loopback address
// (http://127.0.0.1:8080, a server listening only on this machine) lead
// to the container itself. For such a job the engine relays: it listens
// on the gateway address of Docker's default bridge (an address of this
// host, which containers of every bridge network reach) and forwards
// each connection to the server; the job's URLs on a loopback address
// are rewritten to the relay's. The server builds the addresses it hands
// back (signed upload URLs) on the host the request came to, so they go
// through the relay too. URLs on other hosts are left alone: the
// containers reach them as the host does.

// relay forwards the connections to its listeners to their targets.
type relay struct {
	listeners []net.Listener
	mu        sync.Mutex
	conns     map[net.Conn]bool // open, both ends
	closed    bool
}

// isLoopback reports whether the URL's host is a loopback address or
// localhost.
func isLoopback(u *url.URL) bool {
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// bridgeGateway is the gateway address of Docker's default bridge.
func bridgeGateway(ctx context.Context) (string, error) {
	cli, err := container.GetDockerClient(ctx)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	res, err := cli.NetworkInspect(ctx, "bridge", client.NetworkInspectOptions{})
	if err != nil {
		return "", err
	}
	for _, c := range res.Network.IPAM.Config {
		if c.Gateway.IsValid() && c.Gateway.Is4() {
			return c.Gateway.String(), nil
		}
	}
	// Older daemons leave the default bridge's gateway out: its
	// interface's address is the gateway.
	name := res.Network.Options["com.docker.network.bridge.name"]
	if name == "" {
		name = "docker0"
	}
	if iface, err := net.InterfaceByName(name); err == nil {
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				return n.IP.String(), nil
			}
		}
	}
	return "", fmt.Errorf("docker's bridge network has no IPv4 gateway on this host")
}

// relayLoopback rewrites the env's URLs on a loopback address to a relay
// on the Docker bridge's gateway (one listener per server address) and
// returns the relay, nil when the env has no such URL.
func relayLoopback(ctx context.Context, env map[string]string) (*relay, error) {
	targets := map[string]string{} // server host:port to relay host:port
	var gateway string
	r := &relay{conns: map[net.Conn]bool{}}
	for k, v := range env {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !isLoopback(u) {
			continue
		}
		target := u.Host
		if u.Port() == "" {
			target = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
		}
		if _, ok := targets[target]; !ok {
			if gateway == "" {
				if gateway, err = bridgeGateway(ctx); err != nil {
					r.close()
					return nil, err
				}
			}
			ln, err := net.Listen("tcp", net.JoinHostPort(gateway, "0"))
			if err != nil {
				r.close()
				return nil, err
			}
			r.listeners = append(r.listeners, ln)
			go r.serve(ln, target)
			targets[target] = ln.Addr().String()
		}
		u.Host = targets[target]
		env[k] = u.String()
	}
	if len(r.listeners) == 0 {
		return nil, nil
	}
	return r, nil
}

// serve forwards each connection ln accepts to target until ln is
// closed.
func (r *relay) serve(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go r.forward(c, target)
	}
}

// track keeps c to be closed by close; false when the relay is closed.
func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = true
	return true
}

func (r *relay) untrack(c net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.conns, c)
}

// forward copies c to a connection to target and back until either
// side closes (or the relay does).
func (r *relay) forward(c net.Conn, target string) {
	defer c.Close()
	s, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		return
	}
	defer s.Close()
	if !r.track(c) || !r.track(s) {
		return
	}
	defer r.untrack(c)
	defer r.untrack(s)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	<-done
}

// close stops the listeners and ends the connections still open.
func (r *relay) close() {
	if r == nil {
		return
	}
	for _, ln := range r.listeners {
		_ = ln.Close()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for c := range r.conns {
		_ = c.Close()
	}
}

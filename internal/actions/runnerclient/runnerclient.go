// Package runnerclient is `forgeapi runner`: a runner on another machine
// that registers with a forgeapi server (a registration token), keeps its
// credential in a local file, and runs the jobs it claims with the same
// engine as the server's built-in runner (internal/actions/engine), over
// the protocol of internal/actions/runnerproto.
package runnerclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"forgeapi/internal/actions/runnerproto"
)

// Version is the runner's version, sent when it registers.
const Version = "forgeapi-runner-1"

// Config is a registered runner, as its config file keeps it (JSON, mode
// 0600: the credential is its secret).
type Config struct {
	URL        string   `json:"url"` // the server's root URL
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Labels     []string `json:"labels"`
	Credential string   `json:"credential"`
	// Ephemeral runners take one job and are removed by the server when
	// it ends (Run returns then).
	Ephemeral bool `json:"ephemeral,omitempty"`
}

// FromJIT is the configuration of an encoded just-in-time configuration
// (generate-jitconfig's encoded_jit_config), an ephemeral runner's, and
// its work folder.
func FromJIT(encoded string) (*Config, string, error) {
	j, err := runnerproto.DecodeJIT(encoded)
	if err != nil {
		return nil, "", err
	}
	return &Config{URL: rootURL(j.URL), ID: j.ID, Name: j.Name, Labels: j.Labels, Credential: j.Credential, Ephemeral: true},
		j.WorkFolder, nil
}

// Load reads a config file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.URL == "" || c.Credential == "" {
		return nil, fmt.Errorf("%s: not a registered runner's configuration", path)
	}
	return &c, nil
}

// Save writes the config file, readable by its owner alone.
func (c *Config) Save(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Registration is what a runner registers with.
type Registration struct {
	URL    string   // the server's URL (its root, or its /api/v3)
	Token  string   // a registration token of a repository or organization
	Name   string   // default the host's name
	Labels []string // custom labels
	Group  string   // an organization's runner group ("" for the default group)
	// Replace replaces a runner of the same name.
	Replace bool
	// Ephemeral registers a runner that takes one job and is removed.
	Ephemeral bool
}

// Register registers the runner with the server and returns its
// configuration (to Save).
func Register(ctx context.Context, reg Registration) (*Config, error) {
	if reg.Name == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		reg.Name = host
	}
	root := rootURL(reg.URL)
	body := map[string]any{"name": reg.Name, "os": platformOS(), "architecture": platformArch(), "version": Version,
		"labels": orEmpty(reg.Labels), "runner_group": reg.Group, "replace": reg.Replace,
		"ephemeral": reg.Ephemeral}
	var out struct {
		ID     int64  `json:"id"`
		Name   string `json:"name"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
		Credential string `json:"credential"`
	}
	c := client{base: root, auth: reg.Token}
	if _, err := c.do(ctx, http.MethodPost, "/_runner/register", "", body, &out); err != nil {
		return nil, err
	}
	cfg := &Config{URL: root, ID: out.ID, Name: out.Name, Credential: out.Credential, Ephemeral: reg.Ephemeral}
	for _, l := range out.Labels {
		cfg.Labels = append(cfg.Labels, l.Name)
	}
	return cfg, nil
}

// Remove unregisters the runner named name with a remove token.
func Remove(ctx context.Context, url, token, name string) error {
	c := client{base: rootURL(url), auth: token}
	_, err := c.do(ctx, http.MethodPost, "/_runner/remove", "", map[string]string{"name": name}, nil)
	return err
}

// rootURL is the server's root of a URL given with or without /api/v3.
func rootURL(u string) string {
	u = strings.TrimRight(u, "/")
	return strings.TrimSuffix(u, "/api/v3")
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// platformOS is the host's OS as runners report it.
func platformOS() string {
	switch runtime.GOOS {
	case "windows":
		return "Windows"
	case "darwin":
		return "macOS"
	default:
		return "Linux"
	}
}

// platformArch is the host's architecture as runners report it.
func platformArch() string {
	switch runtime.GOARCH {
	case "arm64":
		return "ARM64"
	case "arm":
		return "ARM"
	case "386":
		return "X86"
	default:
		return "X64"
	}
}

// client calls the server with the runner's credential (or a token).
type client struct {
	base string
	auth string
	http *http.Client
}

// Error is the server's answer to a request that failed.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("the server answered %d: %s", e.Status, e.Message) }

// statusOf is the status of a server's error, 0 for another error.
func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// do sends a request (a JSON body, or an io.Reader sent as is) and
// decodes a JSON answer into out when not nil; it returns the status.
func (c client) do(ctx context.Context, method, path, claim string, body, out any) (int, error) {
	var rd io.Reader
	ctype := "application/json"
	switch b := body.(type) {
	case nil:
	case io.Reader:
		rd, ctype = b, "application/octet-stream"
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", runnerproto.AuthScheme+" "+c.auth)
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if claim != "" {
		req.Header.Set(runnerproto.ClaimHeader, claim)
	}
	hc := c.http
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e struct {
			Message string `json:"message"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(b))
		}
		return resp.StatusCode, &Error{Status: resp.StatusCode, Message: e.Message}
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if w, ok := out.(io.Writer); ok {
			_, err = io.Copy(w, resp.Body)
			return resp.StatusCode, err
		}
		return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// OAuth is a remote server's OAuth client configuration, as Claude Code's
// .mcp.json writes it: a client registered with the authorization server
// beforehand (clientId, and clientSecret for a confidential one), and the
// loopback port its redirect URI names. Without clientId harness uses
// clientMetadataUrl, a Client ID Metadata Document the user hosts
// (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25's
// preferred registration), where the authorization server supports those,
// and else registers itself (dynamic client registration) where it
// offers that. The document is the user's: harness hosts none.
type OAuth struct {
	ClientID          string `json:"clientId,omitempty"`
	ClientSecret      string `json:"clientSecret,omitempty"`
	CallbackPort      int    `json:"callbackPort,omitempty"`
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
}

// AuthFile is where the remote servers' OAuth tokens are kept (0600): in
// ~/.agents, whose files the walls hide from every command and server.
func AuthFile(home string) string { return filepath.Join(home, ".agents", "mcp-auth.json") }

// loginTimeout bounds the wait for the user to log in in the browser.
const loginTimeout = 5 * time.Minute

// oauthState is one remote server's side of the MCP authorization flow:
// it gives the transport the stored token when there is one (refreshed
// when it expires), runs the flow on a 401, and stores what it got.
type oauthState struct {
	c *conn
	// flow lets one login run at a time: requests that were refused
	// together wait for it and use its token.
	flow sync.Mutex

	mu sync.Mutex
	ts oauth2.TokenSource
	// scopes the last login got (or the stored one's): a later login asks
	// for them again with what the server asks for then.
	scopes []string
	state  string // "none", "stored", "logging in", "authorized", "failed: …"
	// failed is why this connection's login failed: the SDK tries the
	// handshake again in the older form, and the user is not sent to log
	// in twice for one start.
	failed error
}

func newOAuth(c *conn, def Server, client *http.Client) *oauthState {
	o := &oauthState{c: c, state: "none"}
	if e, ok := loadAuth(c.m.o.AuthFile, authKey(def)); ok {
		o.ts = o.saving(e.config(), e.Token, client)
		o.state, o.scopes = "stored", e.Scopes
	}
	return o
}

func (o *oauthState) status() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state == "none" {
		return ""
	}
	return o.state
}

func (o *oauthState) set(state string) {
	o.mu.Lock()
	o.state = state
	o.mu.Unlock()
}

// token is the access token to send, refreshed when it expired; "" when
// there is none (or its refresh failed: the server's 401 then runs the
// flow).
func (o *oauthState) token() string {
	o.mu.Lock()
	ts := o.ts
	o.mu.Unlock()
	if ts == nil {
		return ""
	}
	t, err := ts.Token()
	if err != nil {
		return ""
	}
	return t.AccessToken
}

// authorize runs the authorization code flow, because the server
// answered req with resp (401, or 403 insufficient_scope). The user opens
// the authorization URL (Options.Login shows it); the redirect comes back
// to a loopback listener of harness's.
func (o *oauthState) authorize(ctx context.Context, req *http.Request, resp *http.Response, sent string) error {
	o.flow.Lock()
	defer o.flow.Unlock()
	if tok := o.token(); tok != "" && tok != sent {
		return nil // another request's login (or refresh) gave a new token meanwhile
	}
	o.mu.Lock()
	failed, granted := o.failed, o.scopes
	o.mu.Unlock()
	if failed != nil {
		return failed
	}
	def, _ := o.c.def.Expand(o.c.m.getenv)
	o.c.mu.Lock()
	login := o.c.login
	o.c.mu.Unlock()
	if login == nil {
		login = o.c.m.o.Login
	}
	if login == nil {
		o.set("needs login")
		return fmt.Errorf("it needs an OAuth login: run harness mcp login %s, or /mcp login %s in a session", def.Name, def.Name)
	}
	o.set("logging in")
	// The user's time in the browser does not count against MCP_TIMEOUT.
	resume := o.c.pauseStart()
	defer resume()
	client := o.c.m.authClient(def)
	cfg, tok, err := runFlow(ctx, flowInput{
		oauth: def.OAuth, client: client, granted: granted,
		show: func(u string) { login(def.Name, u) },
	}, req, resp)
	if err != nil {
		o.set("failed: " + err.Error())
		o.mu.Lock()
		o.failed = fmt.Errorf("OAuth: %w", err)
		o.mu.Unlock()
		return fmt.Errorf("OAuth: %w", err)
	}
	if err := saveAuth(o.c.m.o.AuthFile, authKey(def), entryOf(cfg, tok)); err != nil && o.c.m.o.Notify != nil {
		o.c.m.o.Notify(fmt.Sprintf("MCP server %s: its OAuth token works for this session but could not be stored: %v", def.Name, err))
	}
	o.mu.Lock()
	o.ts, o.state, o.scopes = o.saving(cfg, tok, client), "authorized", cfg.Scopes
	o.mu.Unlock()
	return nil
}

// saving is cfg's token source for tok (it refreshes it when it expires)
// that stores every new token it gets.
func (o *oauthState) saving(cfg *oauth2.Config, tok *oauth2.Token, client *http.Client) oauth2.TokenSource {
	// The refresh outlives any one request: a context of its own, with the
	// client that keeps to the net rules.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
	return &savingSource{base: cfg.TokenSource(ctx, tok), last: tok.AccessToken, save: func(t *oauth2.Token) {
		def, _ := o.c.def.Expand(o.c.m.getenv)
		if err := saveAuth(o.c.m.o.AuthFile, authKey(def), entryOf(cfg, t)); err != nil && o.c.m.o.Notify != nil {
			o.c.m.o.Notify(fmt.Sprintf("MCP server %s: its refreshed OAuth token could not be stored: %v", def.Name, err))
		}
	}}
}

type savingSource struct {
	base oauth2.TokenSource
	mu   sync.Mutex
	last string
	save func(*oauth2.Token)
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.base.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	changed := t.AccessToken != s.last
	s.last = t.AccessToken
	s.mu.Unlock()
	if changed {
		s.save(t)
	}
	return t, nil
}

// authTransport gives the requests of a streamable HTTP server's client
// the stored OAuth token, and on a 401 (or a 403 insufficient_scope: a
// step-up) runs the flow once and sends the request again with the new
// token.
type authTransport struct {
	base http.RoundTripper
	auth *oauthState
}

func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	sent := t.auth.token()
	resp, err := t.base.RoundTrip(withToken(r, sent))
	if err != nil {
		return nil, err
	}
	challenged := resp.StatusCode == http.StatusUnauthorized ||
		resp.StatusCode == http.StatusForbidden && strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope")
	if !challenged || r.Body != nil && r.GetBody == nil {
		return resp, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if err := t.auth.authorize(r.Context(), r, resp, sent); err != nil {
		return nil, err
	}
	again := r.Clone(r.Context())
	if r.GetBody != nil {
		if again.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.base.RoundTrip(withToken(again, t.auth.token()))
}

// withToken is r with the bearer token (r itself when there is none).
func withToken(r *http.Request, tok string) *http.Request {
	if tok == "" {
		return r
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

// authClient is the HTTP client of the OAuth flow: the authorization
// server is another host than the MCP server's, so the net rules decide.
func (m *Manager) authClient(def Server) *http.Client {
	c := m.httpClient(Server{Name: def.Name, URL: def.URL}) // no headers: they are the MCP server's
	c.Timeout = 30 * time.Second
	return c
}

// authEntry is one stored login: the client and endpoints to refresh it.
type authEntry struct {
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	RedirectURL  string        `json:"redirect_url,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
	Saved        time.Time     `json:"saved"`
}

func entryOf(cfg *oauth2.Config, tok *oauth2.Token) authEntry {
	return authEntry{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL,
		AuthStyle: int(cfg.Endpoint.AuthStyle), RedirectURL: cfg.RedirectURL, Scopes: cfg.Scopes, Token: tok, Saved: time.Now().UTC()}
}

func (e authEntry) config() *oauth2.Config {
	return &oauth2.Config{ClientID: e.ClientID, ClientSecret: e.ClientSecret, RedirectURL: e.RedirectURL, Scopes: e.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: e.AuthURL, TokenURL: e.TokenURL, AuthStyle: oauth2.AuthStyle(e.AuthStyle)}}
}

// authKey names a login by server and URL: the same name pointed at
// another URL does not get the token.
func authKey(def Server) string { return def.Name + " " + def.URL }

var authMu sync.Mutex

func loadAuth(path, key string) (authEntry, bool) {
	if path == "" {
		return authEntry{}, false
	}
	authMu.Lock()
	defer authMu.Unlock()
	all := readAuth(path)
	e, ok := all[key]
	return e, ok && e.Token != nil
}

func readAuth(path string) map[string]authEntry {
	all := map[string]authEntry{}
	if raw, err := os.ReadFile(path); err == nil {
		json.Unmarshal(raw, &all)
	}
	return all
}

// saveAuth stores (or with a nil token removes) one login; the file is
// written 0600 by rename, so a reader never sees half of it.
func saveAuth(path, key string, e authEntry) error {
	if path == "" {
		return errors.New("no file to store it in")
	}
	authMu.Lock()
	defer authMu.Unlock()
	all := readAuth(path)
	if e.Token == nil {
		delete(all, key)
	} else {
		all[key] = e
	}
	raw, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Logout forgets a server's stored OAuth token.
func Logout(home string, def Server, getenv func(string) string) error {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	d, err := def.Expand(getenv)
	if err != nil {
		return err
	}
	return saveAuth(AuthFile(home), authKey(d), authEntry{})
}

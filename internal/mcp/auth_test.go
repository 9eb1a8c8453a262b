package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/testenv"
)

// authServer is a loopback OAuth authorization server and an MCP server
// that is its protected resource, as the MCP authorization spec has
// them: the MCP server answers 401 with a resource_metadata challenge,
// serves its protected resource metadata (RFC 9728), the authorization
// server its metadata (RFC 8414), dynamic registration (RFC 7591), the
// authorization code grant with PKCE S256 checked, the resource
// indicator (RFC 8707) checked, and refresh; access tokens live 1 second.
type authServer struct {
	t      *testing.T
	as, rs *httptest.Server
	mu     sync.Mutex
	// clients registered (and the pre-registered one), codes issued, tokens
	clients    map[string][]string // client id: redirect URIs
	codes      map[string]codeGrant
	access     map[string]time.Time // access token: expiry
	refresh    map[string]bool
	registered int
	authorized int
	exchanged  int // code exchanges whose PKCE verifier matched
	refreshed  int
	bearers    []string // the Authorization headers the MCP server saw
	lastClient string
	// variations: the authorization server's metadata without PKCE, or
	// only at OpenID discovery's URI; the 401 without resource_metadata
	noPKCE, openID, noHint bool
	// legacy: a 2025-03-26 server, no protected resource metadata and
	// the MCP server's origin the authorization server; noASMeta: that
	// one publishes no metadata either (its endpoints are the defaults)
	legacy, noASMeta bool
	// cimd: the metadata says client ID metadata documents are supported
	// (an https client_id is then a known client); noRegister: it names
	// no registration endpoint
	cimd, noRegister bool
	// issAdvertised: the metadata says authorization responses carry iss
	// (RFC 9207); issSent: what the redirect's iss is: "", "right", "wrong"
	issAdvertised bool
	issSent       string
}

// issuer is the authorization server's URL: its own, or the MCP
// server's origin for a legacy one. a.mu is held.
func (a *authServer) issuer() string {
	if a.legacy {
		return a.rs.URL
	}
	return a.as.URL
}

type codeGrant struct{ client, challenge, redirect, resource string }

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{t: t, clients: map[string][]string{"preregistered": nil}, codes: map[string]codeGrant{}, access: map[string]time.Time{}, refresh: map[string]bool{}}
	a.as = httptest.NewServer(http.HandlerFunc(a.serveAS))
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.Server("full") }, nil)
	a.rs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		legacy := a.legacy
		a.mu.Unlock()
		switch {
		case legacy && (strings.HasPrefix(r.URL.Path, "/.well-known/oauth-authorization-server") || strings.HasPrefix(r.URL.Path, "/.well-known/openid-configuration") ||
			r.URL.Path == "/authorize" || r.URL.Path == "/token" || r.URL.Path == "/register"):
			a.serveAS(w, r)
			return
		case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
			if legacy {
				http.NotFound(w, r)
				return
			}
			writeJSON(w, map[string]any{"resource": a.rs.URL + "/mcp", "authorization_servers": []string{a.as.URL}, "scopes_supported": []string{"mcp"}})
			return
		}
		h := r.Header.Get("Authorization")
		a.mu.Lock()
		a.bearers = append(a.bearers, h)
		exp, ok := a.access[strings.TrimPrefix(h, "Bearer ")]
		a.mu.Unlock()
		if !ok || time.Now().After(exp) {
			a.mu.Lock()
			noHint := a.noHint || a.legacy
			a.mu.Unlock()
			if noHint {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			} else {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+a.rs.URL+`/.well-known/oauth-protected-resource/mcp", scope="mcp"`)
			}
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(a.rs.Close)
	t.Cleanup(a.as.Close)
	return a
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (a *authServer) serveAS(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	bad := func(code, why string) {
		a.t.Logf("authorization server: %s: %s", code, why)
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": code, "error_description": why})
	}
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration":
		if a.openID != strings.Contains(r.URL.Path, "openid") || a.noASMeta {
			http.NotFound(w, r)
			return
		}
		iss := a.issuer()
		md := map[string]any{"issuer": iss, "authorization_endpoint": iss + "/authorize", "token_endpoint": iss + "/token",
			"registration_endpoint": iss + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"scopes_supported": []string{"mcp", "offline_access"}, "token_endpoint_auth_methods_supported": []string{"none"}}
		if a.noPKCE {
			delete(md, "code_challenge_methods_supported")
		}
		if a.cimd {
			md["client_id_metadata_document_supported"] = true
		}
		if a.noRegister {
			delete(md, "registration_endpoint")
		}
		if a.issAdvertised {
			md["authorization_response_iss_parameter_supported"] = true
		}
		writeJSON(w, md)
	case "/register":
		var md struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		json.NewDecoder(r.Body).Decode(&md)
		a.registered++
		id := fmt.Sprintf("dyn-%d", a.registered)
		a.clients[id] = md.RedirectURIs
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none"})
	case "/authorize":
		q := r.URL.Query()
		uris, ok := a.clients[q.Get("client_id")]
		if a.cimd && strings.HasPrefix(q.Get("client_id"), "https://") {
			ok = true // its document would be fetched; here any is taken
		}
		switch {
		case !ok:
			bad("invalid_client", "unknown client "+q.Get("client_id"))
			return
		case uris != nil && !contains(uris, q.Get("redirect_uri")):
			bad("invalid_request", "redirect_uri not registered")
			return
		case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
			bad("invalid_request", "PKCE S256 required")
			return
		case q.Get("resource") != a.rs.URL+"/mcp":
			bad("invalid_target", "resource "+q.Get("resource"))
			return
		}
		a.authorized++
		a.lastClient = q.Get("client_id")
		code := fmt.Sprintf("code-%d", a.authorized)
		a.codes[code] = codeGrant{q.Get("client_id"), q.Get("code_challenge"), q.Get("redirect_uri"), q.Get("resource")}
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := to.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		switch a.issSent {
		case "right":
			v.Set("iss", a.issuer())
		case "wrong":
			v.Set("iss", "https://evil.example")
		}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	case "/token":
		r.ParseForm()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			g, ok := a.codes[r.Form.Get("code")]
			delete(a.codes, r.Form.Get("code"))
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			switch {
			case !ok:
				bad("invalid_grant", "unknown or used code")
				return
			case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
				bad("invalid_grant", "PKCE verifier does not match")
				return
			case r.Form.Get("redirect_uri") != g.redirect || clientOf(r) != g.client:
				bad("invalid_grant", "client or redirect_uri differ: "+r.Form.Encode()+" "+r.Header.Get("Authorization")+" want "+g.client+" "+g.redirect)
				return
			}
			a.exchanged++
		case "refresh_token":
			if !a.refresh[r.Form.Get("refresh_token")] {
				bad("invalid_grant", "unknown refresh token")
				return
			}
			a.refreshed++
		default:
			bad("unsupported_grant_type", r.Form.Get("grant_type"))
			return
		}
		n := len(a.access) + 1
		at, rt := fmt.Sprintf("access-%d", n), fmt.Sprintf("refresh-%d", n)
		a.access[at] = time.Now().Add(time.Second)
		a.refresh[rt] = true
		writeJSON(w, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 1, "refresh_token": rt, "scope": "mcp offline_access"})
	default:
		http.NotFound(w, r)
	}
}

// clientOf is the client a token request names: in the form, or as the
// user of HTTP Basic authentication (client_secret_basic), which is
// form-encoded there (RFC 6749 §2.3.1: a URL client id has escapes).
func clientOf(r *http.Request) string {
	if id, _, ok := r.BasicAuth(); ok {
		if u, err := url.QueryUnescape(id); err == nil {
			return u
		}
		return id
	}
	return r.Form.Get("client_id")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (a *authServer) counts() (registered, authorized, exchanged, refreshed int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registered, a.authorized, a.exchanged, a.refreshed
}

// browser is the user's browser: it opens the authorization URL and
// follows the redirect to harness's loopback listener.
func browser(t *testing.T, opened *[]string) func(server, u string) {
	return func(server, u string) {
		*opened = append(*opened, server+" "+u)
		go func() {
			resp, err := http.Get(u)
			if err != nil {
				t.Errorf("browser: %v", err)
				return
			}
			resp.Body.Close()
		}()
	}
}

func allowLoopback(ctx context.Context, host string, port int) error {
	if host != "127.0.0.1" {
		return fmt.Errorf("not loopback: %s", host)
	}
	return nil
}

// TestOAuth: a remote MCP server that answers 401 gets the authorization
// flow: discovery from the challenge, dynamic registration, PKCE, the
// user's login through the loopback redirect; the token is stored 0600
// under ~/.agents, refreshed when it expires (the refreshed one stored
// too), and a later session uses it without a login. Without a way to
// log in the server is not started and says how. A configured client id
// is used instead of registering.
func TestOAuth(t *testing.T) {
	testenv.Slow(t)
	a := newAuthServer(t)
	home := t.TempDir()
	file := AuthFile(home)
	def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser}

	// No stored token and no one to log in: a start error that says how.
	_, errs := Start(context.Background(), []Server{def}, Options{AuthFile: file, CheckNet: allowLoopback, StartTimeout: 10 * time.Second})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "harness mcp login remote") {
		t.Fatalf("without a login: %v", errs)
	}

	var opened []string
	m := start(t, nil, Options{AuthFile: file, CheckNet: allowLoopback, Login: browser(t, &opened), StartTimeout: 10 * time.Second}, def)
	reg, auth, exch, _ := a.counts()
	if len(opened) != 1 || reg != 1 || auth != 1 || exch != 1 {
		t.Fatalf("login: opened %q, registered %d, authorized %d, exchanged with PKCE %d", opened, reg, auth, exch)
	}
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__remote__echo","arguments":{"text":"authorized"}}`); res.Content != "echo: authorized" {
		t.Fatalf("call: %+v", res)
	}
	if st := m.Statuses()[0]; st.Auth != "authorized" || st.Err != "" {
		t.Errorf("status: %+v", st)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(file)); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("~/.agents is open to others: %v", fi.Mode())
	}
	stored, _ := loadAuth(file, authKey(def))
	first := stored.Token.AccessToken

	// The access token expires: the next request refreshes it, and the
	// new one is stored.
	time.Sleep(1100 * time.Millisecond)
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__remote__echo","arguments":{"text":"refreshed"}}`); res.Content != "echo: refreshed" {
		t.Fatalf("call after expiry: %+v", res)
	}
	if _, _, _, ref := a.counts(); ref == 0 {
		t.Errorf("the token was not refreshed")
	}
	stored, _ = loadAuth(file, authKey(def))
	if stored.Token.AccessToken == first || stored.Token.RefreshToken == "" {
		t.Errorf("the refreshed token was not stored: %+v", stored.Token)
	}
	m.Close()

	// A later session: the stored token (refreshed) without a login.
	_, authBefore, _, _ := a.counts()
	m2 := start(t, nil, Options{AuthFile: file, CheckNet: allowLoopback, StartTimeout: 10 * time.Second}, def)
	if res := run(t, m2.Tools(true), "mcp_call", `{"name":"mcp__remote__echo","arguments":{"text":"again"}}`); res.Content != "echo: again" {
		t.Errorf("with the stored token: %+v", res)
	}
	if _, authAfter, _, _ := a.counts(); authAfter != authBefore {
		t.Errorf("a second login was asked for")
	}
	m2.Close()

	// Logout forgets it; a configured client id logs in without
	// registering.
	if err := Logout(home, def, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := loadAuth(file, authKey(def)); ok {
		t.Errorf("the token survived the logout")
	}
	pre := def
	pre.OAuth = &OAuth{ClientID: "preregistered"}
	opened = nil
	m3 := start(t, nil, Options{AuthFile: file, CheckNet: allowLoopback, Login: browser(t, &opened), StartTimeout: 10 * time.Second}, pre)
	reg2, _, _, _ := a.counts()
	a.mu.Lock()
	client := a.lastClient
	a.mu.Unlock()
	if reg2 != reg || client != "preregistered" || len(opened) != 1 {
		t.Errorf("with a client id: registered %d (was %d), client %q, opened %q", reg2, reg, client, opened)
	}
	if res := run(t, m3.Tools(true), "mcp_call", `{"name":"mcp__remote__echo","arguments":{"text":"pre"}}`); res.Content != "echo: pre" {
		t.Errorf("with a client id: %+v", res)
	}
}

// TestOAuthRefused: the authorization server's refusal (the user said no)
// ends the login with its error, promptly, and the session goes on.
func TestOAuthRefused(t *testing.T) {
	a := newAuthServer(t)
	def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser}
	deny := func(server, u string) {
		go func() {
			q, _ := url.Parse(u)
			redirect := q.Query().Get("redirect_uri")
			resp, err := http.Get(redirect + "?error=access_denied&error_description=the+user+said+no&state=" + q.Query().Get("state"))
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	began := time.Now()
	_, errs := Start(context.Background(), []Server{def}, Options{AuthFile: AuthFile(t.TempDir()), CheckNet: allowLoopback, Login: deny, StartTimeout: 10 * time.Second})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "access_denied") || time.Since(began) > 8*time.Second {
		t.Errorf("refused login: %v after %s", errs, time.Since(began))
	}
}

// TestOAuthLoginLater: a session whose remote server needs a login starts
// without it (the server failed, "needs login"); Login (/mcp login) runs
// the flow then and the server's tools work in the same session.
func TestOAuthLoginLater(t *testing.T) {
	a := newAuthServer(t)
	def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser}
	m, errs := Start(context.Background(), []Server{def}, Options{AuthFile: AuthFile(t.TempDir()), CheckNet: allowLoopback, StartTimeout: 10 * time.Second})
	t.Cleanup(m.Close)
	if len(errs) != 1 {
		t.Fatalf("start: %v", errs)
	}
	if st := m.Statuses()[0]; st.Auth != "needs login" || st.Err == "" {
		t.Errorf("before the login: %+v", st)
	}
	var opened []string
	if err := m.Login(context.Background(), "remote", browser(t, &opened)); err != nil {
		t.Fatalf("login: %v", err)
	}
	if st := m.Statuses()[0]; st.Auth != "authorized" || st.Err != "" || st.Tools == 0 || len(opened) != 1 {
		t.Errorf("after the login: %+v, opened %q", st, opened)
	}
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__remote__echo","arguments":{"text":"later"}}`); res.Content != "echo: later" {
		t.Errorf("call after the login: %+v", res)
	}
	if err := m.Login(context.Background(), "nosuch", nil); err == nil {
		t.Errorf("a login to an unknown server")
	}
}

// TestOAuthDiscovery: the protected resource metadata is found at its
// well-known URI when the 401 does not name it, and the authorization
// server's metadata through OpenID discovery when RFC 8414's URI has none.
func TestOAuthDiscovery(t *testing.T) {
	a := newAuthServer(t)
	a.noHint, a.openID = true, true
	def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser}
	var opened []string
	m := start(t, nil, Options{AuthFile: AuthFile(t.TempDir()), CheckNet: allowLoopback, Login: browser(t, &opened), StartTimeout: 10 * time.Second}, def)
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__remote__echo","arguments":{"text":"found"}}`); res.Content != "echo: found" {
		t.Errorf("call: %+v", res)
	}
	if _, _, exch, _ := a.counts(); exch != 1 || len(opened) != 1 {
		t.Errorf("exchanged %d, opened %q", exch, opened)
	}
}

// TestOAuthRefusals: harness does not go on with a login the spec says
// to refuse: an authorization server whose metadata does not offer PKCE
// S256 (the user is never sent to it), and a redirect whose state is not
// the one harness sent (its code is never exchanged).
func TestOAuthRefusals(t *testing.T) {
	t.Run("no PKCE", func(t *testing.T) {
		a := newAuthServer(t)
		a.noPKCE = true
		def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser}
		var opened []string
		_, errs := Start(context.Background(), []Server{def}, Options{AuthFile: AuthFile(t.TempDir()), CheckNet: allowLoopback, Login: browser(t, &opened), StartTimeout: 10 * time.Second})
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "without PKCE") || len(opened) != 0 {
			t.Errorf("errors %v, opened %q", errs, opened)
		}
		if reg, auth, _, _ := a.counts(); reg != 0 || auth != 0 {
			t.Errorf("registered %d, authorized %d", reg, auth)
		}
	})
	t.Run("state mismatch", func(t *testing.T) {
		a := newAuthServer(t)
		def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser}
		// The redirect comes back with another state (a forged or stale
		// redirect carrying a real code).
		forged := func(server, u string) {
			go func() {
				noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				resp, err := noFollow.Get(u)
				if err != nil {
					t.Errorf("authorize: %v", err)
					return
				}
				resp.Body.Close()
				to, _ := url.Parse(resp.Header.Get("Location"))
				q := to.Query()
				q.Set("state", "forged")
				to.RawQuery = q.Encode()
				if resp, err := http.Get(to.String()); err == nil {
					resp.Body.Close()
				}
			}()
		}
		_, errs := Start(context.Background(), []Server{def}, Options{AuthFile: AuthFile(t.TempDir()), CheckNet: allowLoopback, Login: forged, StartTimeout: 10 * time.Second})
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "another state") {
			t.Errorf("errors %v", errs)
		}
		if _, auth, exch, _ := a.counts(); auth != 1 || exch != 0 {
			t.Errorf("authorized %d, exchanged %d: the code of a mismatched redirect was used", auth, exch)
		}
	})
}

// loginOnce starts def against a with a browser that follows the
// redirect, and returns the start's errors and the URLs it was sent to.
func loginOnce(t *testing.T, def Server) (*Manager, []error, []string) {
	t.Helper()
	var opened []string
	m, errs := Start(context.Background(), []Server{def}, Options{AuthFile: AuthFile(t.TempDir()), CheckNet: allowLoopback, Login: browser(t, &opened), StartTimeout: 10 * time.Second})
	t.Cleanup(m.Close)
	return m, errs, opened
}

// TestOAuthBackCompat: a server of the 2025-03-26 revision publishes no
// protected resource metadata; its origin is the authorization server,
// whose metadata (RFC 8414) is there, or, when it has none, whose
// endpoints are the defaults /authorize, /token and /register
// (https://modelcontextprotocol.io/specification/2025-03-26/basic/authorization#fallbacks-for-servers-without-metadata-discovery).
func TestOAuthBackCompat(t *testing.T) {
	for _, tc := range []struct {
		name     string
		noASMeta bool
	}{{"metadata at the server's origin", false}, {"no metadata: the default endpoints", true}} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuthServer(t)
			a.legacy, a.noASMeta = true, tc.noASMeta
			def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser}
			m, errs, opened := loginOnce(t, def)
			if len(errs) != 0 {
				t.Fatalf("start: %v", errs)
			}
			if reg, auth, exch, _ := a.counts(); reg != 1 || auth != 1 || exch != 1 || len(opened) != 1 || !strings.HasPrefix(strings.TrimPrefix(opened[0], "remote "), a.rs.URL+"/authorize?") {
				t.Errorf("registered %d, authorized %d, exchanged %d, opened %q", reg, auth, exch, opened)
			}
			if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__remote__echo","arguments":{"text":"old"}}`); res.Content != "echo: old" {
				t.Errorf("call: %+v", res)
			}
		})
	}
}

// TestOAuthClientMetadataDocument: with "clientMetadataUrl" and an
// authorization server that supports client ID metadata documents, the
// URL is the client id and nothing is registered; a configured client id
// comes first and a server without support gets a registration (the
// spec's order: pre-registered, metadata document, dynamic); a URL that
// cannot be a client id is refused before the user is sent anywhere.
func TestOAuthClientMetadataDocument(t *testing.T) {
	const doc = "https://harness.example/oauth/client-metadata.json"
	for _, tc := range []struct {
		name             string
		cimd, noRegister bool
		oauth            OAuth
		client, err      string
		registered, seen int
	}{
		{"supported", true, false, OAuth{ClientMetadataURL: doc}, doc, "", 0, 1},
		{"a client id first", true, false, OAuth{ClientMetadataURL: doc, ClientID: "preregistered"}, "preregistered", "", 0, 1},
		{"not supported: registers", false, false, OAuth{ClientMetadataURL: doc}, "dyn-1", "", 1, 1},
		{"neither: says what to set", false, true, OAuth{ClientMetadataURL: doc}, "", `configure a client registered there, "oauth": {"clientId"`, 0, 0},
		{"not https", true, false, OAuth{ClientMetadataURL: "http://harness.example/doc.json"}, "", "must be an https URL with a path", 0, 0},
		{"no path", true, false, OAuth{ClientMetadataURL: "https://harness.example"}, "", "must be an https URL with a path", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuthServer(t)
			a.cimd, a.noRegister = tc.cimd, tc.noRegister
			o := tc.oauth
			def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser, OAuth: &o}
			_, errs, opened := loginOnce(t, def)
			if tc.err != "" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.err) {
					t.Errorf("errors %v, want one saying %q", errs, tc.err)
				}
			} else if len(errs) != 0 {
				t.Fatalf("start: %v", errs)
			}
			reg, _, _, _ := a.counts()
			a.mu.Lock()
			client := a.lastClient
			a.mu.Unlock()
			if client != tc.client || reg != tc.registered || len(opened) != tc.seen {
				t.Errorf("client %q, registered %d, opened %q; want %q, %d, %d", client, reg, opened, tc.client, tc.registered, tc.seen)
			}
		})
	}
}

// TestOAuthIssuer: the redirect's iss (RFC 9207) must be the
// authorization server's issuer where its metadata says it sends one, and
// must not be there at all where it does not (SEP-2468, and the Go SDK's
// default: an unadvertised iss is refused); a refused redirect's code is
// never exchanged.
func TestOAuthIssuer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		advertised bool
		sent       string
		ok         bool
	}{
		{"advertised and right", true, "right", true},
		{"advertised and missing", true, "", false},
		{"advertised and wrong", true, "wrong", false},
		{"not advertised, none", false, "", true},
		{"not advertised, sent", false, "right", false},
		{"not advertised, wrong", false, "wrong", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuthServer(t)
			a.issAdvertised, a.issSent = tc.advertised, tc.sent
			def := Server{Name: "remote", Type: "http", URL: a.rs.URL + "/mcp", Scope: ScopeUser}
			_, errs, _ := loginOnce(t, def)
			_, auth, exch, _ := a.counts()
			if tc.ok && (len(errs) != 0 || exch != 1) || !tc.ok && (len(errs) != 1 || !strings.Contains(errs[0].Error(), "iss") || auth != 1 || exch != 0) {
				t.Errorf("errors %v, authorized %d, exchanged %d (want a login: %v)", errs, auth, exch, tc.ok)
			}
		})
	}
}

// TestUnionScopes: a later login asks for what the server asks now and
// then for what an earlier one got (SEP-2350), but offline_access only
// where the authorization server offers it (the handler adds it then).
func TestUnionScopes(t *testing.T) {
	for _, tc := range []struct{ found, granted, want []string }{
		{nil, nil, nil},
		{[]string{"write"}, []string{"read", "offline_access"}, []string{"write", "read"}},
		{[]string{"read", "write"}, []string{"read"}, []string{"read", "write"}},
		{nil, []string{"read"}, []string{"read"}},
	} {
		if got := unionScopes(tc.found, tc.granted); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("unionScopes(%q, %q) = %q, want %q", tc.found, tc.granted, got, tc.want)
		}
	}
}

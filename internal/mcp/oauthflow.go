package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// The MCP authorization flow
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization),
// step by step: the server's 401 names its protected resource metadata
// (RFC 9728), which names the authorization server, whose metadata
// (RFC 8414, or OpenID discovery) gives the endpoints; harness registers
// itself (RFC 7591) unless a client id is configured, and gets a code
// with PKCE S256 and the resource indicator (RFC 8707) through the user's
// browser and a loopback redirect, which it exchanges for the token.

type flowInput struct {
	server    string   // the MCP server's URL: the resource
	challenge []string // the 401's WWW-Authenticate headers
	oauth     *OAuth   // a configured client, or nil
	client    *http.Client
	show      func(authURL string) // shows the user the URL to open
}

// resourceMetadata is RFC 9728's protected resource metadata.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is RFC 8414's authorization server metadata (OpenID
// discovery's has the same fields).
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
}

// bearerParams are the parameters of a Bearer challenge (RFC 6750 §3):
// resource_metadata, scope, error.
func bearerParams(headers []string) map[string]string {
	out := map[string]string{}
	for _, h := range headers {
		rest, ok := cutFold(strings.TrimSpace(h), "Bearer")
		if !ok {
			continue
		}
		for rest = strings.TrimSpace(rest); rest != ""; {
			k, v, ok := strings.Cut(rest, "=")
			if !ok {
				break
			}
			k = strings.ToLower(strings.TrimSpace(strings.TrimLeft(k, ", ")))
			v = strings.TrimSpace(v)
			if strings.HasPrefix(v, `"`) {
				var b strings.Builder
				i := 1
				for ; i < len(v) && v[i] != '"'; i++ {
					if v[i] == '\\' && i+1 < len(v) {
						i++
					}
					b.WriteByte(v[i])
				}
				out[k] = b.String()
				rest = strings.TrimLeft(v[min(i+1, len(v)):], " ,")
			} else {
				val, after, _ := strings.Cut(v, ",")
				out[k] = strings.TrimSpace(val)
				rest = strings.TrimSpace(after)
			}
		}
	}
	return out
}

func cutFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	if len(s) > len(prefix) && s[len(prefix)] != ' ' {
		return "", false
	}
	return s[len(prefix):], true
}

// getJSON fetches a metadata document; found is false on a 404 (or any
// answer that is not a JSON object).
func getJSON(ctx context.Context, client *http.Client, u string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", sdk.SupportedProtocolVersions()[0])
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, fmt.Errorf("%s: %w", u, err)
	}
	return true, nil
}

// httpError is an answer that is not what was asked for.
func httpError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	resp.Body.Close()
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return fmt.Errorf("HTTP %s: %s", resp.Status, msg)
}

// wellKnown is u's origin with /.well-known/NAME inserted before u's path.
func wellKnown(u *url.URL, name string) string {
	return u.Scheme + "://" + u.Host + "/.well-known/" + name + strings.TrimSuffix(u.EscapedPath(), "/")
}

// discoverResource finds the server's protected resource metadata: where
// the challenge says, else at the well-known URI for its path, else at
// its origin's.
func discoverResource(ctx context.Context, client *http.Client, server, hinted string) (resourceMetadata, error) {
	su, err := url.Parse(server)
	if err != nil {
		return resourceMetadata{}, err
	}
	var tries []string
	if hinted != "" {
		tries = append(tries, hinted)
	}
	tries = append(tries, wellKnown(su, "oauth-protected-resource"))
	if root := su.Scheme + "://" + su.Host + "/.well-known/oauth-protected-resource"; root != tries[len(tries)-1] {
		tries = append(tries, root)
	}
	for _, u := range tries {
		var md resourceMetadata
		found, err := getJSON(ctx, client, u, &md)
		if err != nil {
			return md, fmt.Errorf("the protected resource metadata: %w", err)
		}
		if !found {
			continue
		}
		if len(md.AuthorizationServers) == 0 {
			return md, fmt.Errorf("the protected resource metadata at %s names no authorization server", u)
		}
		if md.Resource != "" && !resourceCovers(md.Resource, server) {
			return md, fmt.Errorf("the protected resource metadata at %s is for %s, not %s: refused", u, md.Resource, server)
		}
		return md, nil
	}
	return resourceMetadata{}, fmt.Errorf("the server asked for OAuth but publishes no protected resource metadata (RFC 9728; tried %s)", strings.Join(tries, ", "))
}

// resourceCovers reports whether the resource identifier res names the
// server's URL: the same, or a prefix of it at a path boundary.
func resourceCovers(res, server string) bool {
	res, server = strings.TrimSuffix(res, "/"), strings.TrimSuffix(server, "/")
	return res == server || strings.HasPrefix(server, res+"/")
}

// discoverServer reads the authorization server's metadata: RFC 8414's
// well-known URI, then OpenID discovery's two forms.
func discoverServer(ctx context.Context, client *http.Client, issuer string) (serverMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil {
		return serverMetadata{}, fmt.Errorf("authorization server %q: %w", issuer, err)
	}
	tries := []string{wellKnown(iu, "oauth-authorization-server"), wellKnown(iu, "openid-configuration")}
	if p := strings.TrimSuffix(iu.EscapedPath(), "/"); p != "" {
		tries = append(tries, iu.Scheme+"://"+iu.Host+p+"/.well-known/openid-configuration")
	}
	for _, u := range tries {
		var md serverMetadata
		found, err := getJSON(ctx, client, u, &md)
		if err != nil {
			return md, fmt.Errorf("the authorization server's metadata: %w", err)
		}
		if !found {
			continue
		}
		if strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return md, fmt.Errorf("the authorization server's metadata at %s names issuer %q, not %q: refused", u, md.Issuer, issuer)
		}
		if md.AuthorizationEndpoint == "" || md.TokenEndpoint == "" {
			return md, fmt.Errorf("the authorization server's metadata at %s lacks its authorization or token endpoint", u)
		}
		if !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
			return md, fmt.Errorf("the authorization server %s does not support PKCE with S256 (its metadata's code_challenge_methods_supported is %q): harness does not log in without it", issuer, md.CodeChallengeMethodsSupported)
		}
		return md, nil
	}
	return serverMetadata{}, fmt.Errorf("the authorization server %s publishes no metadata (RFC 8414 or OpenID discovery; tried %s)", issuer, strings.Join(tries, ", "))
}

// register is dynamic client registration (RFC 7591): a public client
// with the loopback redirect, a native application (OpenID Connect
// Registration's application_type, which the MCP spec asks clients to
// send: SEP-837).
func register(ctx context.Context, client *http.Client, endpoint, redirect string) (id, secret string, err error) {
	body, _ := json.Marshal(map[string]any{
		"redirect_uris": []string{redirect}, "client_name": "harness", "application_type": "native",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("registering the client: %w", err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("registering the client: %w", httpError(resp))
	}
	defer resp.Body.Close()
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || out.ClientID == "" {
		return "", "", fmt.Errorf("registering the client: no client_id in the answer (%v)", err)
	}
	return out.ClientID, out.ClientSecret, nil
}

// runFlow is the whole flow; it returns the client configuration (to
// refresh with) and the token.
func runFlow(ctx context.Context, in flowInput) (*oauth2.Config, *oauth2.Token, error) {
	ch := bearerParams(in.challenge)
	prm, err := discoverResource(ctx, in.client, in.server, ch["resource_metadata"])
	if err != nil {
		return nil, nil, err
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := discoverServer(ctx, in.client, issuer)
	if err != nil {
		return nil, nil, err
	}
	resource := prm.Resource
	if resource == "" {
		resource = in.server
	}

	port := 0
	if in.oauth != nil {
		port = in.oauth.CallbackPort
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return nil, nil, fmt.Errorf("listening for the login's redirect: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)

	cfg := &oauth2.Config{RedirectURL: redirect, Endpoint: oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams}}
	switch {
	case in.oauth != nil && in.oauth.ClientID != "":
		cfg.ClientID, cfg.ClientSecret = in.oauth.ClientID, in.oauth.ClientSecret
	case asm.RegistrationEndpoint != "":
		cfg.ClientID, cfg.ClientSecret, err = register(ctx, in.client, asm.RegistrationEndpoint, redirect)
		if err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("the authorization server %s offers no dynamic client registration: configure a client id (\"oauth\": {\"clientId\": …}) registered there", issuer)
	}
	if cfg.ClientSecret != "" {
		m := asm.TokenEndpointAuthMethodsSupported
		if len(m) == 0 || slices.Contains(m, "client_secret_basic") || !slices.Contains(m, "client_secret_post") {
			cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
		}
	}
	if s := ch["scope"]; s != "" {
		cfg.Scopes = strings.Fields(s)
	} else {
		cfg.Scopes = prm.ScopesSupported
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(cfg.Scopes, "offline_access") {
		cfg.Scopes = append(slices.Clone(cfg.Scopes), "offline_access") // ask for a refresh token
	}

	state := randomString()
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	iss := ""
	if asm.IssParameterSupported {
		iss = asm.Issuer
	}
	code, err := waitForCode(ctx, ln, state, iss, func() { in.show(authURL) })
	if err != nil {
		return nil, nil, err
	}
	tctx := context.WithValue(ctx, oauth2.HTTPClient, in.client)
	tok, err := cfg.Exchange(tctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return nil, nil, fmt.Errorf("exchanging the code for a token: %w", err)
	}
	return cfg, tok, nil
}

func randomString() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// waitForCode serves the loopback redirect, shows the URL and waits for
// the code. A redirect whose state is not the one sent (or whose issuer
// is not the server's, where it says it sends one) is refused: it is not
// the answer to this login.
func waitForCode(ctx context.Context, ln net.Listener, state, iss string, show func()) (string, error) {
	got := make(chan string, 1)
	failed := make(chan error, 1)
	fail := func(err error) {
		select {
		case failed <- err:
		default:
		}
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if q.Get("state") != state {
			http.Error(w, "harness: this login redirect is not the one harness started (its state differs); it was refused.", http.StatusBadRequest)
			fail(errors.New("the login's redirect carried another state than the one harness sent (a stale or forged redirect): refused"))
			return
		}
		if iss != "" && q.Get("iss") != iss {
			http.Error(w, "harness: this login redirect comes from another issuer; it was refused.", http.StatusBadRequest)
			fail(fmt.Errorf("the login's redirect names issuer %q, not %q: refused", q.Get("iss"), iss))
			return
		}
		if e := q.Get("error"); e != "" {
			fmt.Fprintf(w, "harness: the login failed (%s). You can close this tab.\n", e)
			fail(fmt.Errorf("the authorization server said %s: %s", e, q.Get("error_description")))
			return
		}
		if q.Get("code") == "" {
			http.Error(w, "harness: the redirect carries no code.", http.StatusBadRequest)
			fail(errors.New("the login's redirect carried no code"))
			return
		}
		fmt.Fprintln(w, "harness: logged in. You can close this tab and go back to the terminal.")
		select {
		case got <- q.Get("code"):
		default:
		}
	})}
	go srv.Serve(ln)
	defer func() {
		// Shutdown lets the page that delivered the code finish.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	show()
	timer := time.NewTimer(loginTimeout)
	defer timer.Stop()
	select {
	case code := <-got:
		return code, nil
	case err := <-failed:
		return "", err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-timer.C:
		return "", fmt.Errorf("no login within %s", loginTimeout)
	}
}

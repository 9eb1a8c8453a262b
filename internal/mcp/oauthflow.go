package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The MCP authorization flow
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization)
// is the official Go SDK's client, auth.AuthorizationCodeHandler, one per
// login: it finds the protected resource metadata (RFC 9728: the 401's
// resource_metadata, then the well-known URIs), else falls back as the
// 2025-03-26 revision says (the server's origin is the authorization
// server; without its metadata, RFC 8414 or OpenID discovery, the default
// /authorize, /token and /register endpoints); it picks the client (a
// Client ID Metadata Document, draft-ietf-oauth-client-id-metadata-document,
// where the authorization server supports it, else the configured client,
// else dynamic registration, RFC 7591); it asks with PKCE S256 and the
// resource indicator (RFC 8707), checks the redirect's state and its iss
// (RFC 9207: an iss the server's metadata does not advertise is refused,
// SEP-2468), and exchanges the code. harness gives it what is harness's:
// the loopback listener the user's browser comes back to (fetchCode), the
// net rules' HTTP client, and takes the token to store and refresh
// (auth.go).

type flowInput struct {
	oauth   *OAuth // the server's configured client, or nil
	client  *http.Client
	granted []string             // scopes an earlier login of this server got
	show    func(authURL string) // shows the user the URL to open
}

// runFlow is the whole flow, for the request req the server answered
// with resp (401, or 403 insufficient_scope); it returns the client
// configuration (to refresh with) and the token.
func runFlow(ctx context.Context, in flowInput, req *http.Request, resp *http.Response) (*oauth2.Config, *oauth2.Token, error) {
	var o OAuth
	if in.oauth != nil {
		o = *in.oauth
	}
	if o.ClientMetadataURL != "" && o.ClientID == "" {
		if u, err := url.Parse(o.ClientMetadataURL); err != nil || u.Scheme != "https" || strings.Trim(u.Path, "/") == "" {
			return nil, nil, fmt.Errorf(`"oauth": {"clientMetadataUrl": %q} is no client ID metadata document URL: it must be an https URL with a path (draft-ietf-oauth-client-id-metadata-document §3)`, o.ClientMetadataURL)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(o.CallbackPort))
	if err != nil {
		return nil, nil, fmt.Errorf("listening for the login's redirect: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)

	var cfg *oauth2.Config
	var tok *oauth2.Token
	hc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return fetchCode(ctx, ln, a.URL, in.show)
		},
		Client: in.client,
		// harness stores the refresh token (auth.go): offline_access is
		// asked for where the authorization server offers it (SEP-2207).
		RequestRefreshToken: true,
		// A new login asks again for what an earlier one got, so a step-up
		// does not lose it (SEP-2350; the handler does so within itself,
		// and harness's is one per login).
		ScopeFilter: func(found []string) []string { return unionScopes(found, in.granted) },
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			cfg, tok = c, t
			return c.TokenSource(ctx, t), nil
		},
	}
	if o.ClientID != "" {
		// Pre-registered first, as the spec orders (pre-registered, then
		// a metadata document, then dynamic registration:
		// https://modelcontextprotocol.io/specification/draft/basic/authorization/client-registration);
		// the SDK tries a metadata document first, so it is not given one.
		hc.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			hc.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	} else {
		if o.ClientMetadataURL != "" {
			hc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
		}
		// A public native client (application_type native: SEP-837, the
		// SDK infers it from the loopback redirect).
		hc.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "harness", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		}}
	}
	h, err := auth.NewAuthorizationCodeHandler(hc)
	if err != nil {
		return nil, nil, err
	}
	// The SDK takes the resource from the request's URL: the server's.
	if err := h.Authorize(ctx, req, resp); err != nil {
		return nil, nil, explain(err)
	}
	if tok == nil {
		return nil, nil, errors.New("the login ended without a token")
	}
	return cfg, tok, nil
}

// explain adds what to do to the SDK's errors that have a remedy (the
// SDK has no error values for them, so their words are matched).
func explain(err error) error {
	switch msg := err.Error(); {
	case strings.Contains(msg, "no configured client registration methods are supported"):
		return fmt.Errorf(`%w: the authorization server offers no dynamic client registration (and no client ID metadata document); configure a client registered there, "oauth": {"clientId": …}, or a client ID metadata document, "oauth": {"clientMetadataUrl": …}`, err)
	case strings.Contains(msg, "does not implement PKCE"):
		return fmt.Errorf("%w: its metadata offers no code_challenge_methods_supported, and harness does not log in without PKCE", err)
	}
	return err
}

// unionScopes is found and then what was granted before that it lacks;
// offline_access is left to the handler, which asks for it only where the
// authorization server offers it.
func unionScopes(found, granted []string) []string {
	out := slices.Clone(found)
	for _, s := range granted {
		if s != "offline_access" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// fetchCode is the user's side of the flow: it shows authURL and serves
// the loopback redirect until the code comes back. A redirect whose state
// is not the one in authURL is refused at once: it is not the answer to
// this login. The issuer the redirect names is the SDK's to check.
func fetchCode(ctx context.Context, ln net.Listener, authURL string, show func(string)) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	state := u.Query().Get("state")
	got := make(chan *auth.AuthorizationResult, 1)
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
		// harness checks the answer (its issuer) and exchanges the code
		// after this page: the terminal says how that went.
		fmt.Fprintln(w, "harness: the login came back. You can close this tab and go back to the terminal.")
		select {
		case got <- &auth.AuthorizationResult{Code: q.Get("code"), State: state, Iss: q.Get("iss")}:
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
	show(authURL)
	timer := time.NewTimer(loginTimeout)
	defer timer.Stop()
	select {
	case res := <-got:
		return res, nil
	case err := <-failed:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, fmt.Errorf("no login within %s", loginTimeout)
	}
}

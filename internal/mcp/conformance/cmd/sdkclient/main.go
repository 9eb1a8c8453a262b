// Command sdkclient is the baseline under the conformance suite: a
// minimal client on the official Go SDK (github.com/modelcontextprotocol/go-sdk)
// doing what the scenario's Plan says, as the SDK's own conformance
// client does (its OAuth set-up is that client's). It exits 0 when every
// step the scenario needs worked, 1 otherwise.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/harness-dev/harness/internal/mcp/conformance"
)

func main() {
	timeout := flag.Duration("timeout", 20*time.Second, "give up after this long")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: sdkclient [-timeout D] SERVER-URL (run by the conformance suite)")
		os.Exit(2)
	}
	plan, err := conformance.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, flag.Arg(0), plan); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", plan.Scenario, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, serverURL string, plan conformance.Plan) error {
	var opts *mcp.ClientOptions
	if plan.Elicit != nil {
		opts = &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: plan.Elicit}, nil
			},
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "sdkclient", Version: "1.0.0"}, opts)
	transport := &mcp.StreamableClientTransport{Endpoint: serverURL}
	if plan.OAuth {
		h, err := oauthHandler(plan)
		if err != nil {
			return err
		}
		transport.OAuthHandler = h
	}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	listed, err := session.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	for _, s := range plan.Steps {
		err := step(ctx, session, s, listed.Tools)
		if err != nil && s.Must {
			return fmt.Errorf("%s: %w", s, err)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s, err)
		}
	}
	return nil
}

func step(ctx context.Context, s *mcp.ClientSession, st conformance.Step, listed []*mcp.Tool) error {
	switch st.Kind {
	case conformance.CallTool:
		return call(ctx, s, st.Tool, st.Args)
	case conformance.CallFirstTool:
		if len(listed) == 0 {
			return errors.New("the server lists no tool")
		}
		return call(ctx, s, listed[0].Name, st.Args)
	case conformance.CallEveryTool:
		var errs []error
		for _, t := range listed {
			errs = append(errs, call(ctx, s, t.Name, st.Args))
		}
		return errors.Join(errs...)
	case conformance.EchoSchema:
		for _, t := range listed {
			if t.Name == st.Of {
				return call(ctx, s, st.Tool, map[string]any{"schema": t.InputSchema})
			}
		}
		return fmt.Errorf("the server lists no tool %s", st.Of)
	case conformance.ReadFirstResource:
		rs, err := s.ListResources(ctx, nil)
		if err != nil {
			return err
		}
		if len(rs.Resources) == 0 {
			return errors.New("the server lists no resource")
		}
		_, err = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: rs.Resources[0].URI})
		return err
	case conformance.GetFirstPrompt:
		ps, err := s.ListPrompts(ctx, nil)
		if err != nil {
			return err
		}
		if len(ps.Prompts) == 0 {
			return errors.New("the server lists no prompt")
		}
		_, err = s.GetPrompt(ctx, &mcp.GetPromptParams{Name: ps.Prompts[0].Name, Arguments: map[string]string{}})
		return err
	}
	return fmt.Errorf("unknown step %v", st)
}

func call(ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) error {
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if r.IsError {
		return fmt.Errorf("%s: the tool answered an error", name)
	}
	return nil
}

// redirectURL is where the client says the login page sends the code; the
// fetcher reads it from the redirect without following it.
const redirectURL = "http://localhost:3000/callback"

// oauthHandler is the SDK conformance client's: a client ID metadata
// document, else dynamic registration, else the pre-registered client.
func oauthHandler(plan conformance.Plan) (auth.OAuthHandler, error) {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:                    redirectURL,
		AuthorizationCodeFetcher:       fetchCode,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: plan.ClientMetadataURL},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirectURL}},
		},
	}
	if plan.ClientID != "" && plan.ClientSecret != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{
			ClientID:         plan.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: plan.ClientSecret},
		}
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}

// fetchCode is the user's browser: the suite's authorization server
// answers the login page with a redirect carrying the code.
func fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, fmt.Errorf("the login page's redirect: %w", err)
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

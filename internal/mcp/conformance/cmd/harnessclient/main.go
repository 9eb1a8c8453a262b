// Command harnessclient is harness's MCP client under the conformance
// suite: it connects to the URL it is given with package mcp's exported
// API, as a session does (Start, the tools a model gets, resources and
// prompts), and does what the scenario's Plan says. It exits 0 when every
// step the scenario needs worked, 1 otherwise; the suite judges by its
// own checks.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/mcp/conformance"
	"github.com/harness-dev/harness/internal/tools"
)

// server is the name the suite's server gets in harness's configuration.
const server = "conformance"

func main() {
	timeout := flag.Duration("timeout", 20*time.Second, "give up after this long")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: harnessclient [-timeout D] SERVER-URL (run by the conformance suite)")
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

func run(ctx context.Context, url string, plan conformance.Plan) error {
	def := mcp.Server{Name: server, Type: "http", URL: url, Scope: mcp.ScopeFlag}
	if plan.OAuth {
		def.OAuth = &mcp.OAuth{ClientID: plan.ClientID, ClientSecret: plan.ClientSecret, ClientMetadataURL: plan.ClientMetadataURL}
	}
	deadline, _ := ctx.Deadline()
	// Tokens are stored as a session stores them, in a file of their own.
	home, err := os.MkdirTemp("", "harnessclient-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	o := mcp.Options{
		AuthFile:     filepath.Join(home, "mcp-auth.json"),
		CheckNet:     loopbackOnly,
		StartTimeout: time.Until(deadline),
		CallTimeout:  time.Until(deadline),
		Login:        func(_, u string) { go browse(ctx, u) },
		Notify:       func(s string) { fmt.Fprintln(os.Stderr, "notice:", s) },
	}
	if plan.Elicit != nil {
		// The user who fills in the form: accepts with the plan's
		// content, the fields it leaves out getting the schema's
		// defaults (from the SDK, as in a session).
		o.Elicit = func(context.Context, *mcp.Elicitation) (mcp.ElicitAnswer, error) {
			return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: plan.Elicit}, nil
		}
	}
	m, errs := mcp.Start(ctx, []mcp.Server{def}, o)
	defer m.Close()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	byName := map[string]tools.Tool{}
	var listed []tools.Tool
	for _, t := range m.Tools(false) {
		byName[t.Spec().Name] = t
		listed = append(listed, t)
	}
	for _, s := range plan.Steps {
		err := step(ctx, m, s, byName, listed)
		if err != nil && s.Must {
			return fmt.Errorf("%s: %w", s, err)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s, err)
		}
	}
	return nil
}

func step(ctx context.Context, m *mcp.Manager, s conformance.Step, byName map[string]tools.Tool, listed []tools.Tool) error {
	switch s.Kind {
	case conformance.CallTool:
		return call(ctx, byName[mcp.ToolName(server, s.Tool)], s.Tool, s.Args)
	case conformance.CallFirstTool:
		if len(listed) == 0 {
			return errors.New("the server lists no tool")
		}
		return call(ctx, listed[0], listed[0].Spec().Name, s.Args)
	case conformance.CallEveryTool:
		var errs []error
		for _, t := range listed {
			errs = append(errs, call(ctx, t, t.Spec().Name, s.Args))
		}
		return errors.Join(errs...)
	case conformance.EchoSchema:
		of := byName[mcp.ToolName(server, s.Of)]
		if of == nil {
			return fmt.Errorf("the server lists no tool %s", s.Of)
		}
		return call(ctx, byName[mcp.ToolName(server, s.Tool)], s.Tool, map[string]any{"schema": of.Spec().Schema})
	case conformance.ReadFirstResource:
		rs := m.Resources()
		if len(rs) == 0 {
			return errors.New("the server lists no resource")
		}
		_, err := m.ReadResource(ctx, rs[0].Server, rs[0].URI)
		return err
	case conformance.GetFirstPrompt:
		ps := m.Prompts()
		if len(ps) == 0 {
			return errors.New("the server lists no prompt")
		}
		_, err := m.GetPrompt(ctx, ps[0], "")
		return err
	}
	return fmt.Errorf("unknown step %v", s)
}

// call runs a tool as the agent does (Run, once the gate allowed it).
func call(ctx context.Context, t tools.Tool, name string, args map[string]any) error {
	if t == nil {
		return fmt.Errorf("the server lists no tool %s", name)
	}
	input, err := json.Marshal(args)
	if err != nil {
		return err
	}
	if r := t.Run(ctx, input); r.IsError {
		return fmt.Errorf("%s: %s", name, r.Content)
	}
	return nil
}

// browse is the user's browser: it opens the login URL, whose page the
// suite's authorization server answers with a redirect to harness's
// loopback listener, and follows it there.
func browse(ctx context.Context, u string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "login:", err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "login:", err)
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// loopbackOnly lets the client reach the suite's authorization servers,
// which listen on localhost like its MCP server, and nothing else.
func loopbackOnly(_ context.Context, host string, _ int) error {
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not loopback: the conformance client reaches only the suite's servers", host)
}

package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// ClientMetadataURL is the client ID metadata document's URL the suite's
// auth/basic-cimd expects as the client id (its authorization server does
// not fetch the document); the SDK's conformance client uses it too.
const ClientMetadataURL = "https://conformance-test.local/client-metadata.json"

// The environment the suite gives the client it runs.
const (
	ScenarioEnv = "MCP_CONFORMANCE_SCENARIO"
	ContextEnv  = "MCP_CONFORMANCE_CONTEXT"
	// VersionEnv is the protocol version the scenario runs at (2025-11-25
	// unless the scenario is of a later revision).
	VersionEnv = "MCP_CONFORMANCE_PROTOCOL_VERSION"
)

// Kind is what a Step does once the client is connected and has listed
// the server's tools.
type Kind int

const (
	// CallTool calls Step.Tool with Step.Args.
	CallTool Kind = iota
	// CallFirstTool calls the first listed tool with Step.Args.
	CallFirstTool
	// CallEveryTool calls every listed tool with Step.Args.
	CallEveryTool
	// EchoSchema calls Step.Tool with {"schema": the input schema of
	// Step.Of as the client listed it}, so the suite sees what the
	// client's parse of tools/list kept.
	EchoSchema
	// ReadFirstResource reads the first listed resource.
	ReadFirstResource
	// GetFirstPrompt gets the first listed prompt, without arguments.
	GetFirstPrompt
)

// Step is one thing the client does after it connected.
type Step struct {
	Kind Kind
	Tool string
	Of   string
	Args map[string]any
	// Must: the scenario is about this step; when it fails the client
	// exits 1. Other steps only give the suite something to watch.
	Must bool
}

func (s Step) String() string {
	switch s.Kind {
	case CallTool:
		return "call " + s.Tool
	case CallFirstTool:
		return "call the first tool"
	case CallEveryTool:
		return "call every tool"
	case EchoSchema:
		return "echo " + s.Of + "'s schema through " + s.Tool
	case ReadFirstResource:
		return "read the first resource"
	case GetFirstPrompt:
		return "get the first prompt"
	}
	return fmt.Sprintf("step %d", int(s.Kind))
}

// Plan is what a client does for one scenario: connect (logging in
// with OAuth when the server asks), list the tools, then Steps.
type Plan struct {
	Scenario string
	// OAuth: the server asks for the MCP authorization flow; the client
	// logs in with the authorization code flow, whose login page the
	// suite's authorization server answers at once with a redirect.
	OAuth bool
	// ClientID and ClientSecret are a client registered beforehand (from
	// the scenario's context); empty: the client registers itself.
	ClientID, ClientSecret string
	// ClientMetadataURL is the client's Client ID Metadata Document, used
	// where the authorization server supports those (auth scenarios).
	ClientMetadataURL string
	// Elicit, when not nil, is the content a client that can answer
	// elicitation requests accepts them with.
	Elicit map[string]any
	Steps  []Step
}

// FromEnv is the plan for the scenario the suite runs.
func FromEnv() (Plan, error) {
	name := os.Getenv(ScenarioEnv)
	if name == "" {
		return Plan{}, fmt.Errorf("%s is not set: this program is run by the conformance suite (npx @modelcontextprotocol/conformance client --command ...)", ScenarioEnv)
	}
	return PlanFor(name, os.Getenv(ContextEnv))
}

// PlanFor is the plan for scenario with the suite's context (JSON, ""
// for none). A scenario it does not know gets connect and list: the
// suite's checks then say what more it wanted.
func PlanFor(scenario, context string) (Plan, error) {
	var ctx struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		ToolCalls    []struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"toolCalls"`
	}
	if context != "" {
		if err := json.Unmarshal([]byte(context), &ctx); err != nil {
			return Plan{}, fmt.Errorf("%s is not the JSON object the suite writes: %w", ContextEnv, err)
		}
	}
	p := Plan{Scenario: scenario}
	must := func(tool string, args map[string]any) Step {
		return Step{Kind: CallTool, Tool: tool, Args: args, Must: true}
	}
	switch scenario {
	case "tools_call":
		p.Steps = []Step{must("add_numbers", map[string]any{"a": 5, "b": 3})}
	case "elicitation-sep1034-client-defaults":
		p.Elicit = map[string]any{} // accept, so the server's defaults apply
		p.Steps = []Step{must("test_client_elicitation_defaults", map[string]any{})}
	case "sse-retry":
		p.Steps = []Step{must("test_reconnection", map[string]any{})}
	case "json-schema-2020-12-preservation":
		p.Steps = []Step{{Kind: EchoSchema, Tool: "json_schema_echo", Of: "json_schema_2020_12_tool", Must: true}}
	case "sep-2322-client-request-state":
		p.Elicit = map[string]any{"confirmed": true}
		for _, t := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			// Some of these the client should refuse: the suite judges.
			p.Steps = append(p.Steps, Step{Kind: CallTool, Tool: t, Args: map[string]any{}})
		}
	case "http-standard-headers":
		p.Steps = []Step{{Kind: CallFirstTool, Args: map[string]any{}}, {Kind: ReadFirstResource}, {Kind: GetFirstPrompt}}
	case "http-custom-headers":
		for _, c := range ctx.ToolCalls {
			args := c.Arguments
			if args == nil {
				args = map[string]any{}
			}
			p.Steps = append(p.Steps, Step{Kind: CallTool, Tool: c.Name, Args: args})
		}
	case "http-invalid-tool-headers":
		p.Steps = []Step{{Kind: CallEveryTool, Args: map[string]any{"region": "us-west1"}}}
	default:
		if strings.HasPrefix(scenario, "auth/") {
			p.OAuth = true
			p.ClientID, p.ClientSecret = ctx.ClientID, ctx.ClientSecret
			p.ClientMetadataURL = ClientMetadataURL
			p.Steps = []Step{must("test-tool", map[string]any{})}
		}
		// initialize, request-metadata, json-schema-ref-no-deref and the
		// extensions': connect and list.
	}
	return p, nil
}

package conformance

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestParseList reads the scenario list of the pinned suite as it prints
// it (testdata/list-client.txt is conformance list --client's output).
func TestParseList(t *testing.T) {
	data, err := os.ReadFile("testdata/list-client.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := parseList(string(data))
	if len(got) != 48 || got[0] != "initialize" || got[len(got)-1] != "sep-2640-client-verify-frontmatter" {
		t.Fatalf("parseList: %d names, %q", len(got), got)
	}
	for _, want := range []string{"tools_call", "auth/metadata-default", "auth/2025-03-26-oauth-endpoint-fallback"} {
		if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+want+" ") {
			t.Errorf("parseList lost %s", want)
		}
	}
	// A listing with the server section after the client one stops at it.
	if got := parseList("Client scenarios (x):\n  - a [v]\n\nServer scenarios (y):\n  - b [v]\n"); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("parseList read past the client section: %q", got)
	}
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		checks []check
		want   string
	}{
		{"all succeed", []check{{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "INFO"}}, pass},
		{"a failure", []check{{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "FAILURE"}}, fail},
		{"a warning fails, as the suite says", []check{{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "WARNING"}}, fail},
		{"only skipped", []check{{ID: "a", Status: "SKIPPED"}}, none},
		{"only info", []check{{ID: "a", Status: "INFO"}}, none},
		{"nothing", nil, none},
	} {
		if got := judge(tc.checks).verdict; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestReadResults reads a saved run (real checks.json files of the pinned
// suite): each scenario by its name, the auth ones one directory deeper.
func TestReadResults(t *testing.T) {
	got, err := readResults("testdata/results")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("readResults: %d scenarios, want 3: %v", len(got), got)
	}
	if r := got["auth/metadata-default"]; r.verdict != pass || len(r.why) != 0 {
		t.Errorf("auth/metadata-default: %+v, want a pass", r)
	}
	if r := got["sep-2640-client-no-prefetch"]; r.verdict != none {
		t.Errorf("sep-2640-client-no-prefetch: %+v, want n/a (every check skipped)", r)
	}
	r := got["sse-retry"]
	if r.verdict != fail || len(r.why) != 2 || !strings.HasPrefix(r.why[0], "failure client-sse-retry-timing: Client reconnected too early") ||
		!strings.HasPrefix(r.why[1], "warning client-sse-last-event-id") {
		t.Errorf("sse-retry: %+v, want the failed timing and the warning", r)
	}
	if r.stderr != "client-sse-retry-timing: see checks.json | second line" {
		t.Errorf("sse-retry's stderr: %q", r.stderr)
	}
	if _, err := readResults(t.TempDir()); err == nil {
		t.Error("an empty result directory read as a run")
	}
}

func TestPlanFor(t *testing.T) {
	for _, tc := range []struct {
		scenario, context string
		want              Plan
	}{
		{"initialize", "", Plan{Scenario: "initialize"}},
		{"sep-2640-client-no-prefetch", "", Plan{Scenario: "sep-2640-client-no-prefetch"}},
		{"tools_call", "", Plan{Scenario: "tools_call", Steps: []Step{{Kind: CallTool, Tool: "add_numbers", Args: map[string]any{"a": 5, "b": 3}, Must: true}}}},
		{"auth/pre-registration", `{"name":"auth/pre-registration","client_id":"id","client_secret":"s"}`, Plan{Scenario: "auth/pre-registration",
			OAuth: true, ClientID: "id", ClientSecret: "s", ClientMetadataURL: ClientMetadataURL, Steps: []Step{{Kind: CallTool, Tool: "test-tool", Args: map[string]any{}, Must: true}}}},
		{"http-custom-headers", `{"toolCalls":[{"name":"a","arguments":{"x":1}},{"name":"b"}]}`, Plan{Scenario: "http-custom-headers",
			Steps: []Step{{Kind: CallTool, Tool: "a", Args: map[string]any{"x": float64(1)}}, {Kind: CallTool, Tool: "b", Args: map[string]any{}}}}},
		{"json-schema-2020-12-preservation", "", Plan{Scenario: "json-schema-2020-12-preservation",
			Steps: []Step{{Kind: EchoSchema, Tool: "json_schema_echo", Of: "json_schema_2020_12_tool", Must: true}}}},
	} {
		got, err := PlanFor(tc.scenario, tc.context)
		if err != nil {
			t.Errorf("%s: %v", tc.scenario, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.scenario, got, tc.want)
		}
	}
	if _, err := PlanFor("auth/pre-registration", "{not json"); err == nil || !strings.Contains(err.Error(), ContextEnv) {
		t.Errorf("a context that is not JSON: %v, want an error naming %s", err, ContextEnv)
	}
	t.Setenv(ScenarioEnv, "")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "conformance suite") {
		t.Errorf("FromEnv without a scenario: %v, want an error saying the suite runs it", err)
	}
}

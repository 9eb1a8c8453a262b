package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeEnv(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(EnvPath(home), []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestParseEnv(t *testing.T) {
	in := `# comment
export MODEL=claude-sonnet-4
API_KEY="sk-with \"quote\""
BASE_URL='http://x/y'
CAP = 123 # trailing
EMPTY=
`
	got, err := ParseEnv(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"MODEL": "claude-sonnet-4", "API_KEY": `sk-with "quote"`, "BASE_URL": "http://x/y", "CAP": "123", "EMPTY": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := ParseEnv(strings.NewReader("no equals sign\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad line: err = %v, want line number", err)
	}
}

func TestPrecedence(t *testing.T) {
	home := writeEnv(t, "MODEL=file-model\nAPI_KEY=file-key\nBASE_URL=https://api.anthropic.com\nCONTEXT_WINDOW=1000\n", 0o600)
	tests := []struct {
		name      string
		env       map[string]string
		flags     map[string]string
		wantModel string
		wantWin   int
	}{
		{"file", nil, nil, "file-model", 1000},
		{"env over file", map[string]string{"MODEL": "env-model"}, nil, "env-model", 1000},
		{"flag over env", map[string]string{"MODEL": "env-model"}, map[string]string{"MODEL": "flag-model"}, "flag-model", 1000},
		{"window from env", map[string]string{"CONTEXT_WINDOW": "2000"}, nil, "file-model", 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(Source{Home: home, Env: tt.env, Flags: tt.flags})
			if err != nil {
				t.Fatal(err)
			}
			if c.Model != tt.wantModel || c.ContextWindow != tt.wantWin {
				t.Errorf("model %q window %d, want %q %d", c.Model, c.ContextWindow, tt.wantModel, tt.wantWin)
			}
			if c.Provider != "anthropic" {
				t.Errorf("provider %q, want anthropic from BASE_URL host", c.Provider)
			}
			if len(c.Warnings) != 0 {
				t.Errorf("unexpected warnings %v", c.Warnings)
			}
		})
	}
}

func TestInferProvider(t *testing.T) {
	tests := []struct {
		env      map[string]string
		want     string
		wantBase string
		wantKey  string
	}{
		{map[string]string{"ANTHROPIC_API_KEY": "a"}, "anthropic", "", "a"},
		{map[string]string{"OPENAI_API_KEY": "o", "OPENAI_BASE_URL": "http://localhost:11434/v1"}, "openai", "http://localhost:11434/v1", "o"},
		{map[string]string{"BASE_URL": "http://127.0.0.1:8080"}, "openai", "http://127.0.0.1:8080", ""},
		{map[string]string{"PROVIDER": "Anthropic", "ANTHROPIC_BASE_URL": "http://proxy"}, "anthropic", "http://proxy", ""},
	}
	for _, tt := range tests {
		c, err := Load(Source{Home: t.TempDir(), Env: tt.env})
		if err != nil {
			t.Fatal(err)
		}
		if c.Provider != tt.want || c.BaseURL != tt.wantBase || c.APIKey != tt.wantKey {
			t.Errorf("%v: got %q %q %q, want %q %q %q", tt.env, c.Provider, c.BaseURL, c.APIKey, tt.want, tt.wantBase, tt.wantKey)
		}
	}
}

func TestValidateNamesFileAndKeys(t *testing.T) {
	home := t.TempDir()
	c, err := Load(Source{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if err == nil {
		t.Fatal("empty config validated")
	}
	for _, want := range []string{EnvPath(home), "MODEL", "API_KEY", "PROVIDER"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// A local server needs no key.
	c, _ = Load(Source{Home: home, Env: map[string]string{"BASE_URL": "http://localhost:8080", "MODEL": "m"}})
	if err := c.Validate(); err != nil {
		t.Errorf("local endpoint without key: %v", err)
	}
}

func TestBadValues(t *testing.T) {
	for _, env := range []map[string]string{
		{"PROVIDER": "gemini"},
		{"CONTEXT_WINDOW": "big"},
		{"COMPACT_AT": "2"},
		{"COMPACT_AT": "0.3", "COMPACT_TO": "0.5"},
		{"THINKING": "lots"},
		{"THINKING": "budget 512"},                        // below the API's 1024
		{"THINKING": "budget 8000", "MAX_TOKENS": "8000"}, // must stay below max_tokens
		{"EFFORT": "extreme"},
		{"TRIM_OLD_TEXT": "sometimes"},
		{"WIRE_API": "grpc"},
		{"RESPONSES_STORE": "maybe"},
		{"LSP_WARNINGS": "-1"},
		{"LSP_WARNINGS": "some"},
	} {
		if _, err := Load(Source{Home: t.TempDir(), Env: env}); err == nil {
			t.Errorf("%v: no error", env)
		}
	}
}

func TestWorldReadableWarns(t *testing.T) {
	home := writeEnv(t, "MODEL=m\n", 0o644)
	if err := os.Chmod(EnvPath(home), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(Source{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "chmod 600") {
		t.Errorf("warnings = %v, want a chmod hint", c.Warnings)
	}
}

func TestThinking(t *testing.T) {
	for _, tc := range []struct {
		env          map[string]string
		mode, effort string
		budget       int
	}{
		{map[string]string{}, "", "", 0},
		{map[string]string{"THINKING": "off"}, "off", "", 0},
		{map[string]string{"THINKING": "Adaptive", "EFFORT": "high"}, "adaptive", "high", 0},
		{map[string]string{"THINKING": "budget 8000"}, "budget", "", 8000},
		{map[string]string{"THINKING": "4096", "EFFORT": "low"}, "budget", "low", 4096},
	} {
		c, err := Load(Source{Home: t.TempDir(), Env: tc.env})
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		if c.Thinking != tc.mode || c.ThinkingBudget != tc.budget || c.Effort != tc.effort {
			t.Errorf("%v: got %q %d %q", tc.env, c.Thinking, c.ThinkingBudget, c.Effort)
		}
	}
}

// Trimming old assistant text is off unless asked for; the cap is 5,000.
func TestLayerDefaults(t *testing.T) {
	c, err := Load(Source{Home: t.TempDir(), Env: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if c.TrimOldText || c.Cap != 5000 {
		t.Errorf("defaults: trim %v, cap %d", c.TrimOldText, c.Cap)
	}
	for v, want := range map[string]bool{"on": true, "1": true, "TRUE": true, "off": false, "0": false} {
		c, err := Load(Source{Home: t.TempDir(), Env: map[string]string{"TRIM_OLD_TEXT": v}})
		if err != nil || c.TrimOldText != want {
			t.Errorf("TRIM_OLD_TEXT=%s: %v, %v", v, c.TrimOldText, err)
		}
	}
}

func TestResponsesStore(t *testing.T) {
	for in, want := range map[string]bool{"": false, "off": false, "on": true, "true": true} {
		c, err := Load(Source{Home: t.TempDir(), Env: map[string]string{"RESPONSES_STORE": in}})
		if err != nil || c.ResponsesStore != want {
			t.Errorf("RESPONSES_STORE=%q: %v, %v", in, c.ResponsesStore, err)
		}
	}
}

// TestLSP: the language-server settings come from the file like the rest.
func TestLSP(t *testing.T) {
	home := writeEnv(t, "LSP='.py=pylsp'\nLSP_WARNINGS=3\n", 0o600)
	c, err := Load(Source{Home: home, Env: map[string]string{}})
	if err != nil || c.LSP != ".py=pylsp" || c.LSPWarnings != 3 {
		t.Fatalf("LSP %q, LSP_WARNINGS %d, %v", c.LSP, c.LSPWarnings, err)
	}
}

func TestWireAPI(t *testing.T) {
	for in, want := range map[string]string{"": "", "responses": "responses", " Chat ": "chat", "chat_completions": "chat"} {
		c, err := Load(Source{Home: t.TempDir(), Env: map[string]string{"WIRE_API": in}})
		if err != nil || c.WireAPI != want {
			t.Errorf("WIRE_API=%q: %q, %v; want %q", in, c.WireAPI, err, want)
		}
	}
}

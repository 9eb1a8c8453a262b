package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Config is the resolved configuration of one harness process.
type Config struct {
	Provider      string // "anthropic" or "openai"
	BaseURL       string
	APIKey        string
	Model         string
	ContextWindow int
	MaxTokens     int
	// OpenAIProfile forces the OpenAI adapter's server profile
	// (OPENAI_PROFILE: openai, gemini, groq, mistral, deepseek, openrouter,
	// ollama…); empty lets it choose by host and model.
	OpenAIProfile string
	// WireAPI (WIRE_API, Codex's wire_api) is the OpenAI format:
	// "responses" or "chat"; empty chooses (responses for a reasoning
	// model on OpenAI's own endpoint, chat elsewhere).
	WireAPI string
	// ResponsesStore (RESPONSES_STORE) sends store: true on the Responses
	// API, so the provider keeps each response; off by default, reasoning
	// then travels back encrypted.
	ResponsesStore bool
	// Sandbox (SANDBOX) is the backend --sandbox auto means: empty picks
	// the best OS sandbox; docker or podman runs the session in a
	// container, which auto never picks by itself.
	Sandbox string
	// LSP changes which language servers give an edit its errors: "off",
	// or EXT=COMMAND entries separated by ";" (package lsp's
	// ParseSetting); empty keeps the built-in table. LSPWarnings
	// (LSP_WARNINGS) is how many warnings an edit's result may list
	// beside the errors: none by default.
	LSP         string
	LSPWarnings int

	// Reasoning: THINKING is off, adaptive or a budget ("budget 8000" or
	// just "8000"); empty leaves the model's default. EFFORT is the
	// output_config.effort level.
	Thinking       string // "", "off", "adaptive" or "budget"
	ThinkingBudget int
	Effort         string

	// Context layers.
	Cap       int
	Stub      int
	CompactAt float64
	CompactTo float64
	// TrimOldText (TRIM_OLD_TEXT) cuts old assistant text over 900 chars
	// to about 500. Off by default: it saves 0.13 of raw in the replay,
	// but no published evaluation supports dropping in-loop reasoning.
	TrimOldText bool

	// Prices per million tokens; negative means "use the built-in table".
	PriceInput, PriceOutput, PriceCacheRead, PriceCacheWrite float64

	// EnvFile is the path of the file that was read (it may not exist).
	EnvFile string
	// Warnings are things the user should know but that do not stop harness.
	Warnings []string
}

// Defaults of the reference harness.
const (
	DefaultContextWindow = 128000
	DefaultMaxTokens     = 16384
	DefaultCap           = 5000
	DefaultStub          = 300
	DefaultCompactAt     = 0.85
	DefaultCompactTo     = 0.35
)

// LayerKeys are the settings of the context layers: what an A/B run of
// harness batch may vary between its arms.
var LayerKeys = []string{"CAP", "STUB", "COMPACT_AT", "COMPACT_TO", "CONTEXT_WINDOW", "TRIM_OLD_TEXT"}

// Source is where configuration comes from; tests build one by hand.
type Source struct {
	Home  string            // the user's home directory
	Env   map[string]string // the process environment
	Flags map[string]string // flags the user set, by config key (e.g. "MODEL")
}

// FromOS returns a Source for the running process with the given flags.
func FromOS(flags map[string]string) (Source, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Source{}, fmt.Errorf("finding the home directory: %w", err)
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return Source{Home: home, Env: env, Flags: flags}, nil
}

// EnvPath is the path of the user's env file.
func EnvPath(home string) string { return filepath.Join(home, ".agents", "env") }

// Load resolves the configuration. It does not insist on a key or model:
// Validate does, so commands that need no provider (sandbox, doctor, bench)
// work without one.
func Load(src Source) (*Config, error) {
	c := &Config{EnvFile: EnvPath(src.Home)}
	file, err := c.readEnvFile()
	if err != nil {
		return nil, err
	}
	// A flag beats the environment, which beats the env file.
	get := func(key string) string {
		if v, ok := src.Flags[key]; ok && v != "" {
			return v
		}
		if v, ok := src.Env[key]; ok && v != "" {
			return v
		}
		return file[key]
	}
	for _, step := range []func(func(string) string) error{c.loadProvider, c.loadNumbers, c.loadSwitches} {
		if err := step(get); err != nil {
			return nil, err
		}
	}
	if err := c.parseThinking(get("THINKING"), get("EFFORT")); err != nil {
		return nil, err
	}
	if c.CompactTo >= c.CompactAt {
		return nil, fmt.Errorf("COMPACT_TO (%g) must be below COMPACT_AT (%g): fix them in %s", c.CompactTo, c.CompactAt, c.EnvFile)
	}
	return c, nil
}

// readEnvFile reads c.EnvFile, which may be missing, and warns when others
// can read it.
func (c *Config) readEnvFile() (map[string]string, error) {
	f, err := os.Open(c.EnvFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return map[string]string{}, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", c.EnvFile, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s is readable by other users (mode %04o) and holds your API key; run: chmod 600 %s", c.EnvFile, fi.Mode().Perm(), c.EnvFile))
	}
	file, err := ParseEnv(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.EnvFile, err)
	}
	return file, nil
}

// loadProvider reads the provider, its endpoint, key, model and wire API,
// and the sandbox and LSP settings. The provider's own variables
// (ANTHROPIC_API_KEY, OPENAI_BASE_URL, ...) fill what the generic ones
// leave empty.
func (c *Config) loadProvider(get func(string) string) error {
	c.Provider = strings.ToLower(get("PROVIDER"))
	c.BaseURL = get("BASE_URL")
	c.APIKey = get("API_KEY")
	c.Model = get("MODEL")
	c.OpenAIProfile = get("OPENAI_PROFILE")
	c.WireAPI = strings.ToLower(strings.TrimSpace(get("WIRE_API")))
	switch c.WireAPI {
	case "", "responses", "chat":
	case "chat_completions", "chat-completions", "completions":
		c.WireAPI = "chat"
	default:
		return fmt.Errorf("WIRE_API=%q is not known: set it to responses (OpenAI's Responses API) or chat (Chat Completions) in %s or the environment", c.WireAPI, c.EnvFile)
	}
	c.Sandbox = strings.ToLower(get("SANDBOX"))
	c.LSP = get("LSP")
	if v := get("LSP_WARNINGS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("LSP_WARNINGS=%q is not a whole number (0 lists no warning): fix it in %s or the environment", v, c.EnvFile)
		}
		c.LSPWarnings = n
	}

	if c.Provider == "" {
		c.Provider = inferProvider(c.BaseURL, get)
	}
	var prefix string
	switch c.Provider {
	case "anthropic":
		prefix = "ANTHROPIC_"
	case "openai":
		prefix = "OPENAI_"
	case "":
		return nil
	default:
		return fmt.Errorf("PROVIDER=%q is not known: set PROVIDER to anthropic or openai in %s", c.Provider, c.EnvFile)
	}
	if c.BaseURL == "" {
		c.BaseURL = get(prefix + "BASE_URL")
	}
	if c.APIKey == "" {
		c.APIKey = get(prefix + "API_KEY")
	}
	return nil
}

// loadNumbers reads the sizes and prices, each with its default and range.
func (c *Config) loadNumbers(get func(string) string) error {
	ints := []struct {
		key string
		dst *int
		def int
	}{
		{"CONTEXT_WINDOW", &c.ContextWindow, DefaultContextWindow},
		{"MAX_TOKENS", &c.MaxTokens, DefaultMaxTokens},
		{"CAP", &c.Cap, DefaultCap},
		{"STUB", &c.Stub, DefaultStub},
	}
	for _, it := range ints {
		*it.dst = it.def
		if v := get(it.key); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%s=%q is not a positive whole number: fix it in %s or the environment", it.key, v, c.EnvFile)
			}
			*it.dst = n
		}
	}
	floats := []struct {
		key      string
		dst      *float64
		def      float64
		min, max float64
	}{
		{"COMPACT_AT", &c.CompactAt, DefaultCompactAt, 0.05, 1},
		{"COMPACT_TO", &c.CompactTo, DefaultCompactTo, 0.01, 1},
		{"PRICE_INPUT", &c.PriceInput, -1, 0, 1e6},
		{"PRICE_OUTPUT", &c.PriceOutput, -1, 0, 1e6},
		{"PRICE_CACHE_READ", &c.PriceCacheRead, -1, 0, 1e6},
		{"PRICE_CACHE_WRITE", &c.PriceCacheWrite, -1, 0, 1e6},
	}
	for _, it := range floats {
		*it.dst = it.def
		if v := get(it.key); v != "" {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || x < it.min || x > it.max {
				return fmt.Errorf("%s=%q must be a number between %g and %g: fix it in %s or the environment", it.key, v, it.min, it.max, c.EnvFile)
			}
			*it.dst = x
		}
	}
	return nil
}

// loadSwitches reads the on/off settings.
func (c *Config) loadSwitches(get func(string) string) error {
	for _, it := range []struct {
		key string
		dst *bool
	}{
		{"TRIM_OLD_TEXT", &c.TrimOldText},
		{"RESPONSES_STORE", &c.ResponsesStore},
	} {
		switch v := strings.ToLower(strings.TrimSpace(get(it.key))); v {
		case "", "0", "off", "false", "no":
		case "1", "on", "true", "yes":
			*it.dst = true
		default:
			return fmt.Errorf("%s=%q must be on or off: fix it in %s or the environment", it.key, v, c.EnvFile)
		}
	}
	return nil
}

// parseThinking reads THINKING and EFFORT with the constraints Anthropic
// documents for extended thinking: budget_tokens at least 1024 and below
// max_tokens.
func (c *Config) parseThinking(th, effort string) error {
	th = strings.ToLower(strings.TrimSpace(th))
	switch th {
	case "", "off", "adaptive":
		c.Thinking = th
	default:
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(th, "budget")))
		if err != nil {
			return fmt.Errorf("THINKING=%q must be off, adaptive or a budget such as \"budget 8000\": fix it in %s or the environment", th, c.EnvFile)
		}
		if n < 1024 || n >= c.MaxTokens {
			return fmt.Errorf("THINKING budget %d must be at least 1024 and below MAX_TOKENS (%d), which counts the reasoning too: fix THINKING or MAX_TOKENS in %s", n, c.MaxTokens, c.EnvFile)
		}
		c.Thinking, c.ThinkingBudget = "budget", n
	}
	effort = strings.ToLower(strings.TrimSpace(effort))
	switch effort {
	case "", "low", "medium", "high", "xhigh", "max":
		c.Effort = effort
	default:
		return fmt.Errorf("EFFORT=%q must be low, medium, high, xhigh or max: fix it in %s or the environment", effort, c.EnvFile)
	}
	return nil
}

// inferProvider guesses the wire format from the base URL's host, then from
// which provider key is set.
func inferProvider(baseURL string, get func(string) string) string {
	if baseURL != "" {
		if u, err := url.Parse(baseURL); err == nil && strings.Contains(u.Host, "anthropic") {
			return "anthropic"
		}
		return "openai"
	}
	switch {
	case get("ANTHROPIC_API_KEY") != "" || get("ANTHROPIC_BASE_URL") != "":
		return "anthropic"
	case get("OPENAI_API_KEY") != "" || get("OPENAI_BASE_URL") != "":
		return "openai"
	}
	return ""
}

// Validate reports, in one message, what a provider call still needs.
func (c *Config) Validate() error {
	var missing []string
	if c.Provider == "" {
		missing = append(missing, "PROVIDER (anthropic or openai) or BASE_URL")
	}
	if c.Model == "" {
		missing = append(missing, "MODEL")
	}
	if c.APIKey == "" && !c.isLocal() {
		missing = append(missing, "API_KEY")
	}
	if len(missing) > 0 {
		return fmt.Errorf("harness is not configured: set %s in %s (KEY=VALUE lines) or the environment", strings.Join(missing, ", "), c.EnvFile)
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("BASE_URL=%q is not an http(s) URL: fix it in %s or the environment", c.BaseURL, c.EnvFile)
		}
	}
	return nil
}

// isLocal reports whether the endpoint is a local server that needs no key
// (Ollama, llama.cpp, vLLM on loopback).
func (c *Config) isLocal() bool {
	u, err := url.Parse(c.BaseURL)
	if err != nil || c.BaseURL == "" {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}

// ParseEnv reads KEY=VALUE lines.
func ParseEnv(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("line %d: want KEY=VALUE", n)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			uq, err := strconv.Unquote(v)
			if err != nil {
				return nil, fmt.Errorf("line %d: bad double-quoted value for %s", n, k)
			}
			v = uq
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			v = v[1 : len(v)-1]
		default:
			// An unquoted value may carry a trailing comment.
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		out[k] = v
	}
	return out, sc.Err()
}

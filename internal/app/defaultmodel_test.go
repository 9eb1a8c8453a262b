package app

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

// TestDefaultModel: with a key for a provider's public API and no MODEL,
// the session uses the catalogue's default for that provider and says so;
// with a BASE_URL (a server whose models harness cannot know) MODEL is
// still asked for.
func TestDefaultModel(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		o := testOptions(t)
		o.Source.Env["PROVIDER"], o.Source.Env["MODEL"], o.Source.Env["BASE_URL"] = provider, "", ""
		s, err := Open(context.Background(), o)
		if err != nil {
			t.Fatalf("%s without MODEL: %v", provider, err)
		}
		want := llm.DefaultCatalogue().DefaultModel(provider)
		if want == "" || s.Config.Model != want {
			t.Errorf("%s: model %q, want the catalogue's default %q", provider, s.Config.Model, want)
		}
		said := false
		for _, w := range s.Warnings {
			said = said || strings.Contains(w.Text, "MODEL is not set: using "+want)
		}
		if !said {
			t.Errorf("%s: the default is not said: %+v", provider, s.Warnings)
		}
		s.Close()
	}
	o := testOptions(t)
	o.Source.Env["MODEL"] = ""
	if _, err := Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "MODEL") {
		t.Errorf("with a BASE_URL and no MODEL: %v, want MODEL asked for", err)
	}
}

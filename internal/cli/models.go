package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/llm"
)

func newModelsCommand(stdio Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models [NAME]",
		Short: "List the model catalogue: window, longest reply, price, reasoning",
		Long: `models lists what harness knows of each model: its context window, its longest
reply, its list price per million tokens (input, output, cache read, cache write) and
whether it reasons. A price the providers do not publish as one rate card is shown as
unknown, and the cost meter then says "price unknown" rather than guessing.

With NAME, it shows the entry that NAME resolves to (a dated snapshot such as
claude-haiku-4-5-20251001, or a router name such as anthropic/claude-opus-4.7, finds
its model).

Entries in ~/.agents/models.json (the catalogue format, {"models":[...]}) replace or
add to the built-in ones; CONTEXT_WINDOW, MAX_TOKENS and PRICE_* in ~/.agents/env
override them for the configured model.` + plainExitHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runModels(cmd.Context(), modelsOptions{Name: firstArg(args)}, stdio)
		},
	}
	return cmd
}

// userCatalogue is the built-in catalogue with models.json beside the env
// file (~/.agents/models.json) laid over it when that file exists.
func userCatalogue(envFile string) (*llm.Catalogue, error) {
	path := filepath.Join(filepath.Dir(envFile), "models.json")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return llm.DefaultCatalogue(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	over, err := llm.ParseCatalogue(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return llm.DefaultCatalogue().Merge(over), nil
}

// modelsOptions are harness models' arguments.
type modelsOptions struct {
	Name string // one model to show ("": all)
}

// runModels prints the catalogue (the built-in one with
// ~/.agents/models.json laid over it), or the entry Name resolves to.
func runModels(_ context.Context, o modelsOptions, stdio Stdio) error {
	src, err := config.FromOS(nil)
	if err != nil {
		return err
	}
	cat, err := userCatalogue(config.EnvPath(src.Home))
	if err != nil {
		return err
	}
	name, w := o.Name, stdio.Out
	models := cat.Sorted()
	if name != "" {
		m, ok := cat.Lookup(name)
		if !ok {
			return &ExitError{Code: 1, Err: fmt.Errorf("%q is not in the catalogue: its window and price are unknown; set CONTEXT_WINDOW and PRICE_INPUT/PRICE_OUTPUT in ~/.agents/env, or add it to ~/.agents/models.json", name)}
		}
		models = []llm.Model{m}
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tWINDOW\tMAX OUT\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tREASONING")
	for _, m := range models {
		price := "unknown\t\t\t"
		if p := m.Price; p != nil {
			price = fmt.Sprintf("$%s\t$%s\t$%s\t$%s", dollars(p.Input), dollars(p.Output), dollars(p.CacheRead), dollars(p.CacheWrite))
		}
		reasoning := "no"
		if m.Reasoning {
			reasoning = "yes"
		}
		n := m.Name
		if m.Family {
			n += "-*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n, m.Provider, size(m.ContextWindow), size(m.MaxOutput), price, reasoning)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if name == "" && cat.Checked != "" {
		fmt.Fprintf(w, "\nPrices are list prices in dollars per million tokens, compiled %s from the sources cited; harness models NAME shows an entry's source.\n", cat.Checked)
	}
	if name != "" && models[0].Source != "" {
		fmt.Fprintf(w, "\nsource: %s\n", models[0].Source)
	}
	return nil
}

func size(n int) string {
	switch {
	case n <= 0:
		return "?"
	case n%1000000 == 0:
		return fmt.Sprintf("%dM", n/1000000)
	case n >= 1000000:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n%1000 == 0:
		return fmt.Sprintf("%dK", n/1000)
	case n%1024 == 0:
		return fmt.Sprintf("%dK", n/1024) // 32768 is "32K" everywhere
	}
	return fmt.Sprintf("%d", n)
}

func dollars(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" {
		return "0"
	}
	return s
}

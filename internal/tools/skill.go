package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/skills"
)

// ReadSkill returns the whole SKILL.md of a skill listed in the system
// prompt. It reads only the files skills.Discover found, never a path the
// model chose.
type ReadSkill struct{ Skills *skills.Set }

type skillArgs struct {
	Name string `json:"name"`
}

// Spec implements Tool.
func (r *ReadSkill) Spec() llm.Tool {
	return llm.Tool{
		Name: "read_skill",
		Description: "Load the full instructions of a skill listed under \"# Skills\" in the system prompt. Call it " +
			"before starting a task that matches the skill's description, then follow what it says.",
		Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The skill's name, exactly as listed."}},"required":["name"]}`),
	}
}

// Access implements Tool. The skill files were found by the harness, not
// named by the model, so there is no path to check.
func (r *ReadSkill) Access(input json.RawMessage) (Access, error) {
	var a skillArgs
	if err := decode(input, &a, "name"); err != nil {
		return Access{}, err
	}
	return Access{Tool: "read_skill"}, nil
}

// Run implements Tool.
func (r *ReadSkill) Run(ctx context.Context, input json.RawMessage) Result {
	var a skillArgs
	if err := decode(input, &a, "name"); err != nil {
		return Errorf("%v", err)
	}
	name := strings.TrimSpace(a.Name)
	sk, ok := r.Skills.Lookup(name)
	if !ok {
		names := r.Skills.Names()
		if len(names) == 0 {
			return Errorf("no skill named %q: this session has no skills", name)
		}
		return Errorf("no skill named %q; the skills that exist are: %s", name, strings.Join(names, ", "))
	}
	text, err := sk.Read()
	if err != nil {
		return Errorf("%v", err)
	}
	return Result{Content: text}
}

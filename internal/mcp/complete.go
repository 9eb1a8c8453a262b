package mcp

import (
	"context"
	"errors"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// CompleteTimeout bounds one completion question: Tab waits for it, so a
// slow server costs the user at most this, and then offers nothing.
const CompleteTimeout = time.Second

// errNoCompletion: the server does not offer completions.
var errNoCompletion = errors.New("the server offers no completions")

// CompletePrompt asks the prompt's server (completion/complete) for the
// values of the argument being typed at the end of typed, the text after
// /mcp__SERVER__PROMPT as the user has it so far: a positional word (the
// next argument in the prompt's order) or NAME=VALUE. The arguments bound
// already go with the question as its context. Each value comes back as
// the whole word to put in place of the last one (NAME= kept, quoted when
// it holds a blank). A server without the completions capability, or one
// that does not answer within CompleteTimeout, gives none.
func (m *Manager) CompletePrompt(ctx context.Context, p Prompt, typed string) ([]string, error) {
	s, c, err := m.session(p.Server)
	if err != nil {
		return nil, err
	}
	if init := c.initResult(); init == nil || init.Capabilities == nil || init.Capabilities.Completions == nil {
		return nil, errNoCompletion
	}
	words := splitWords(typed)
	last := ""
	if typed != "" && !strings.ContainsAny(typed[len(typed)-1:], " \t") && len(words) > 0 {
		last, words = words[len(words)-1], words[:len(words)-1]
	}
	arg, value, prefix := argumentAt(p, words, last)
	if arg == "" {
		return nil, nil
	}
	bound, _ := bindWords(p, words)
	cctx, cancel := context.WithTimeout(ctx, CompleteTimeout)
	defer cancel()
	res, err := s.Complete(cctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: p.Name},
		Argument: sdk.CompleteParamsArgument{Name: arg, Value: value},
		Context:  &sdk.CompleteContext{Arguments: bound},
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range res.Completion.Values {
		if len(out) == 100 { // the spec's most per answer
			break
		}
		if strings.ContainsAny(v, " \t\n\"'") {
			v = `"` + strings.ReplaceAll(v, `"`, `'`) + `"`
		}
		out = append(out, prefix+v)
	}
	return out, nil
}

// argumentAt is the argument the word last fills after words: by name
// (NAME=VALUE, prefix "NAME=") or the next positional one not named;
// "" when every argument is filled.
func argumentAt(p Prompt, words []string, last string) (arg, value, prefix string) {
	named := map[string]bool{}
	known := map[string]bool{}
	for _, a := range p.Args {
		known[a.Name] = true
	}
	if k, v, ok := strings.Cut(last, "="); ok && known[k] {
		return k, v, k + "="
	}
	positional := 0
	for _, w := range words {
		if k, _, ok := strings.Cut(w, "="); ok && known[k] {
			named[k] = true
			continue
		}
		positional++
	}
	for _, a := range p.Args {
		if named[a.Name] {
			continue
		}
		if positional == 0 {
			return a.Name, last, ""
		}
		positional--
	}
	return "", "", ""
}

// initResult is the server's InitializeResult, nil before it connected.
func (c *conn) initResult() *sdk.InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.init
}

package compact

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
)

// The user's own words survive compaction verbatim, quoted by harness, even
// when the model's note leaves them out, and across a second compaction.
func TestUserMessagesSurviveCompaction(t *testing.T) {
	h := history.New(history.Config{Window: 4000})
	first := "Please rename Foo to Bar everywhere, but NOT in vendor/ — and keep the old name as an alias."
	turn := func(prompt string) {
		h.Append(llm.Text(llm.RoleUser, prompt))
		h.Append(llm.Text(llm.RoleAssistant, strings.Repeat("working on it. ", 200)))
	}
	turn(first)
	turn("also update the docs")
	turn("now run the tests")
	p := &fakeProvider{reply: "<summary>## Goal\nrename things\n</summary>"}
	compactOnce := func() string {
		edit, _, err := Compact(context.Background(), p, llm.Request{Messages: h.Messages()}, h, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Apply(edit); err != nil {
			t.Fatal(err)
		}
		return edit.Summary.Text
	}
	sum := compactOnce()
	if !strings.Contains(sum, first) || !strings.Contains(sum, "also update the docs") {
		t.Fatalf("the summary lost the user's words:\n%s", sum)
	}
	turn("one more thing: keep the changelog")
	turn("and bump the version")
	sum = compactOnce()
	for _, want := range []string{first, "also update the docs", "one more thing: keep the changelog"} {
		if !strings.Contains(sum, want) {
			t.Errorf("second summary lacks %q:\n%s", want, sum)
		}
	}
	if n := strings.Count(sum, first); n != 1 {
		t.Errorf("the first request is quoted %d times", n)
	}
}

// sizeLimited refuses any request over limit chars as too long, as a server
// with a small window does, and answers summaries otherwise.
type sizeLimited struct {
	limit int
	calls int
	sizes []int
}

func (s *sizeLimited) Name() string { return "limited" }

func (s *sizeLimited) Stream(_ context.Context, req *llm.Request, _ func(llm.Event)) (*llm.Reply, error) {
	s.calls++
	n := len(req.System)
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			n += len(b.Text) + len(b.Content) + len(b.Input)
		}
	}
	s.sizes = append(s.sizes, n)
	if n > s.limit {
		return nil, &llm.Error{Kind: llm.ErrContextTooLong, Message: "prompt is too long"}
	}
	return &llm.Reply{Message: llm.Text(llm.RoleAssistant, "<summary>part summarised</summary>"), Usage: llm.Usage{Input: n / 4, Output: 10}}, nil
}

// When even the part to replace is over what the server takes, the summary
// is written in chunks that each fit.
func TestCompactInChunksWhenTooLong(t *testing.T) {
	h := history.New(history.Config{Window: 4000})
	for i := 0; i < 12; i++ {
		h.Append(llm.Text(llm.RoleUser, "step"))
		h.Append(llm.Text(llm.RoleAssistant, strings.Repeat("long reasoning and output ", 150)))
	}
	p := &sizeLimited{limit: 4000 * 4 / 2} // half the window, in chars
	edit, reply, err := Compact(context.Background(), p, llm.Request{Messages: h.Messages()}, h, "")
	if err != nil {
		t.Fatalf("chunked compaction failed: %v (request sizes %v)", err, p.sizes)
	}
	if p.calls < 3 {
		t.Errorf("%d calls: want a refused whole request, then several chunks", p.calls)
	}
	for i, n := range p.sizes[1:] {
		if n > p.limit {
			t.Errorf("chunk request %d is %d chars, over the limit %d", i+1, n, p.limit)
		}
	}
	if !strings.Contains(edit.Summary.Text, "part summarised") || reply.Usage.Output < 20 {
		t.Errorf("summary %q, usage %+v", edit.Summary.Text, reply.Usage)
	}
	if err := h.Apply(edit); err != nil {
		t.Fatal(err)
	}
}

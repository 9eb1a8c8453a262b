package history

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

func testImage(name string) *llm.Image {
	return &llm.Image{Name: name, MediaType: "image/png", Data: strings.Repeat("QUFB", 5000), Width: 1568, Height: 882, OrigWidth: 3840, OrigHeight: 2160}
}

// An old image, the user's or a tool result's, is stubbed like an old
// result: never sent in full again, and the stub replays on resume.
func TestOldImagesStubbed(t *testing.T) {
	for _, strat := range []string{"harness", "append"} {
		t.Run(strat, func(t *testing.T) {
			cfg := Config{}
			if strat == "append" {
				cfg.Strategy = Append
			}
			h := New(cfg)
			h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: "what is wrong here?"}, llm.ImageBlock(testImage("page.png"))}})
			h.Append(call("r1", "read logo"))
			h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "r1", Content: "image logo.png, 64x64", Image: testImage("logo.png")}}})
			h.Append(llm.Text(llm.RoleAssistant, "the logo overlaps the menu"))
			before := h.Tokens()
			edits := h.EndTurn()
			h.Append(llm.Text(llm.RoleUser, "fix it"))
			edits = append(edits, h.Maintain()...)
			msgs := h.Messages()
			raw, _ := json.Marshal(msgs)
			if strings.Contains(string(raw), "QUFB") {
				t.Fatalf("an old image is still sent in full (edits %+v)", edits)
			}
			if b := msgs[0].Blocks[1]; b.Type != llm.BlockText || !strings.Contains(b.Text, "image page.png, 1568x882 (scaled down from 3840x2160)") {
				t.Errorf("user image stub: %+v", b)
			}
			if b := msgs[2].Blocks[0]; b.Image != nil || !strings.HasPrefix(b.Content, "image logo.png, 64x64\n[harness strip: the image logo.png") {
				t.Errorf("tool result image stub: %+v", b)
			}
			if h.Tokens() >= before-1000 {
				t.Errorf("tokens %d -> %d: the images' cost was not taken off", before, h.Tokens())
			}
			// The edits replay on resume to the same messages.
			r := New(cfg)
			r.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: "what is wrong here?"}, llm.ImageBlock(testImage("page.png"))}})
			r.Append(call("r1", "read logo"))
			r.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "r1", Content: "image logo.png, 64x64", Image: testImage("logo.png")}}})
			r.Append(llm.Text(llm.RoleAssistant, "the logo overlaps the menu"))
			r.Append(llm.Text(llm.RoleUser, "fix it"))
			for _, e := range edits {
				data, _ := json.Marshal(e)
				var back Edit
				json.Unmarshal(data, &back)
				if err := r.Apply(back); err != nil {
					t.Fatal(err)
				}
			}
			again, _ := json.Marshal(r.Messages())
			if string(again) != string(raw) {
				t.Error("replayed edits give other messages")
			}
		})
	}
}

// The latest image is sent whole.
func TestRecentImageKept(t *testing.T) {
	h := New(Config{})
	h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{llm.ImageBlock(testImage("a.png"))}})
	h.Maintain()
	if h.Messages()[0].Blocks[0].Image == nil {
		t.Fatal("the latest image was stubbed")
	}
}

package cli

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/testenv"
)

// cmdMkPNG writes a W×H PNG with some detail: mkpng FILE W H.
func cmdMkPNG(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: mkpng FILE W H")
	}
	w, err := strconv.Atoi(args[1])
	ts.Check(err)
	h, err := strconv.Atoi(args[2])
	ts.Check(err)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	ts.Check(png.Encode(f, img))
}

func TestMentionsAttachImages(t *testing.T) {
	proj := t.TempDir()
	writeTestPNG(t, proj+"/shot.png", 2000, 1000)
	outside := t.TempDir()
	writeTestPNG(t, outside+"/drop.png", 10, 10)
	tests := []struct {
		name, prompt string
		images       bool
		want         []string // image names
		note         string
	}{
		{"@image", "why? @shot.png", true, []string{"shot.png"}, "attached image shot.png, 1568x784 (scaled down from 2000x1000)"},
		{"a dropped path outside the project", "see '" + outside + "/drop.png'", true, []string{"drop.png"}, "attached image drop.png, 10x10"},
		{"a model without images", "why? @shot.png", false, nil, "this model does not take images"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, imgs, notes := attachMentions(tt.prompt, proj, nil, tt.images, nil)
			if p != tt.prompt {
				t.Errorf("prompt changed: %q", p)
			}
			var names []string
			for _, im := range imgs {
				names = append(names, im.Name)
			}
			if len(names) != len(tt.want) || (len(names) > 0 && names[0] != tt.want[0]) {
				t.Errorf("images %v, want %v", names, tt.want)
			}
			if len(notes) != 1 || !contains(notes[0], tt.note) {
				t.Errorf("notes %q, want %q", notes, tt.note)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func writeTestPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
}

// TestChatMentionSendsImage: in the interactive loop, @shot.png in a
// prompt attaches the screenshot, scaled, to that message as the fake
// server receives it, in each wire format; the line says so.
func TestChatMentionSendsImage(t *testing.T) {
	testenv.Slow(t)
	for _, tt := range []struct{ provider, model, where string }{
		{"anthropic", "claude-sonnet-4-5", "image"},
		{"openai", "gpt-4o", "image_url"},
	} {
		t.Run(tt.provider, func(t *testing.T) {
			srv, _ := chatEnv(t, tt.provider, tt.model)
			proj := t.TempDir()
			writeTestPNG(t, proj+"/shot.png", 3000, 1500)
			srv.Enqueue(llmtest.Reply{Text: "The header overlaps."})
			out, _ := chatPiped(t, proj, "why is the header wrong? @shot.png\n/exit\n")
			if !contains(out, "attached image shot.png, 1568x784 (scaled down from 3000x1500)") || !contains(out, "The header overlaps.") {
				t.Errorf("output:\n%s", out)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || len(reqs[0].Images) != 1 {
				t.Fatalf("requests %d, images %+v", len(reqs), reqs)
			}
			if im := reqs[0].Images[0]; im.Width != 1568 || im.Height != 784 || im.Where != tt.where {
				t.Errorf("the server saw %+v", im)
			}
		})
	}
}

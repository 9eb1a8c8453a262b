package llm_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
	"github.com/harness-dev/harness/internal/llm/responses"
	"github.com/harness-dev/harness/internal/testenv"
)

// screenshot is a PNG of w×h with some detail, like a page screenshot.
func screenshot(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPrepareImage(t *testing.T) {
	testenv.Slow(t)
	tests := []struct {
		name          string
		w, h          int
		wantW, wantH  int
		wantOrig      bool
		wantMediaType string
	}{
		{"small stays as is", 200, 100, 200, 100, false, "image/png"},
		{"a 4K screenshot is scaled to 1568 on the long edge", 3840, 2160, 1568, 882, true, ""},
		{"a tall page", 1000, 9000, 174, 1568, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := llm.PrepareImage("shot.png", screenshot(t, tt.w, tt.h))
			if err != nil {
				t.Fatal(err)
			}
			if img.Width != tt.wantW || img.Height != tt.wantH || (img.OrigWidth != 0) != tt.wantOrig {
				t.Errorf("got %dx%d (orig %dx%d)", img.Width, img.Height, img.OrigWidth, img.OrigHeight)
			}
			if tt.wantMediaType != "" && img.MediaType != tt.wantMediaType {
				t.Errorf("media type %s", img.MediaType)
			}
			if len(img.Data)*3/4 > llm.MaxImageBytes {
				t.Errorf("%d bytes base64, over the limit", len(img.Data))
			}
		})
	}
	if _, err := llm.PrepareImage("notes.txt", []byte("hello")); err == nil {
		t.Error("text accepted as an image")
	}
}

// TestImageReachesEachWireFormat sends a user image and a tool result's
// image through each adapter to the fake server, which decodes and checks
// them as the real one would (size, dimensions, media type).
func TestImageReachesEachWireFormat(t *testing.T) {
	testenv.Slow(t)
	img, err := llm.PrepareImage("shot.png", screenshot(t, 3000, 2000))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := llm.PrepareImage("logo.png", screenshot(t, 64, 64))
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{
		{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: "why is the header misaligned?"}, llm.ImageBlock(img)}},
		{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"logo.png"}`)}}},
		{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "call_1", Content: "image logo.png, 64x64", Image: shot}}},
	}
	type provider interface {
		Stream(context.Context, *llm.Request, func(llm.Event)) (*llm.Reply, error)
	}
	tests := []struct {
		name  string
		new   func(url string) provider
		where []string
	}{
		{"anthropic", func(u string) provider { return anthropic.New(anthropic.Config{BaseURL: u, APIKey: "k"}) }, []string{"image", "tool_result"}},
		{"chat completions", func(u string) provider { return openai.New(openai.Config{BaseURL: u, APIKey: "k"}) }, []string{"image_url", "image_url"}},
		{"responses", func(u string) provider {
			p, err := responses.New(responses.Config{BaseURL: u, APIKey: "k"})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, []string{"input_image", "input_image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			p := tt.new(srv.URL)
			req := &llm.Request{Model: "m", MaxTokens: 100, Messages: msgs, Tools: []llm.Tool{{Name: "read_file", Schema: json.RawMessage(`{"type":"object"}`)}}}
			if _, err := p.Stream(context.Background(), req, func(llm.Event) {}); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			seen := reqs[0].Images
			if len(seen) != 2 {
				t.Fatalf("images seen: %+v", seen)
			}
			if seen[0].Width != 1568 || seen[0].Height != 1045 || seen[1].Width != 64 {
				t.Errorf("not the resized images: %+v", seen)
			}
			for i, w := range tt.where {
				if seen[i].Where != w {
					t.Errorf("image %d sent as %s, want %s", i, seen[i].Where, w)
				}
			}
		})
	}
}

func TestFakeServerRefusesOversizedImage(t *testing.T) {
	// Unprepared: a raw 9000 px image is what the real server refuses.
	raw := screenshot(t, 9000, 10)
	img := &llm.Image{Name: "big.png", MediaType: "image/png", Data: b64(raw), Width: 9000, Height: 10}
	srv := llmtest.NewServer(t)
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"})
	req := &llm.Request{Model: "m", MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Blocks: []llm.Block{llm.ImageBlock(img)}}}}
	_, err := p.Stream(context.Background(), req, func(llm.Event) {})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("8000 pixels")) {
		t.Fatalf("want the dimension refusal, got %v", err)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/tools"
)

// TestClientCapabilities: against the Go server built with the SDK, run
// inside the sandbox: the roots it is given are the walls' writable
// roots; an image in a tool result reaches the model as an image (a
// model that takes none gets it described); its instructions are offered
// for the system prompt; what it logs reaches Options.Log; the resource
// tool lists its resources and URI templates and reads a resource or a
// template's filled-in URI, each read gated under the server's name.
func TestClientCapabilities(t *testing.T) {
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendNone)
	var mu sync.Mutex
	var logged []string
	m := start(t, sb, Options{Images: true, Log: func(server, level, text string) {
		mu.Lock()
		logged = append(logged, server+" "+level+" "+text)
		mu.Unlock()
	}}, f.goServer("go", "full"))
	ts := m.Tools(false)

	roots := run(t, ts, "mcp__go__roots", `{}`)
	want := (&url.URL{Scheme: "file", Path: sb.Policy().Writable()[0]}).String()
	if roots.IsError || roots.Content != want {
		t.Errorf("roots: %q, want %q (the project, as the policy holds it)", roots.Content, want)
	}

	img := run(t, ts, "mcp__go__image", `{}`)
	if img.IsError || img.Image == nil || img.Image.Width != 2 || !strings.Contains(img.Content, "a red square") || !strings.Contains(img.Content, "shown to you as an image") {
		t.Errorf("image: %+v", img)
	}

	if got := m.Instructions(); got != "## go\n"+mcptest.Instructions+"\n" {
		t.Errorf("instructions: %q", got)
	}

	if res := run(t, ts, "mcp__go__log", `{"text":"disk almost full"}`); res.IsError || res.Content != "logged: <nil>" {
		t.Errorf("log: %+v", res)
	}
	waitFor(t, "the server's log message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(logged, "\n") == "go warning test: disk almost full"
	})

	var read tools.Tool
	for _, tl := range ts {
		if tl.Spec().Name == ResourceToolName {
			read = tl
		}
	}
	if read == nil {
		t.Fatal("no resource tool, though the server offers resources")
	}
	if res := read.Run(context.Background(), json.RawMessage(`{}`)); !strings.Contains(res.Content, "server go  uri test://readme  readme (text/plain)") ||
		!strings.Contains(res.Content, "server go  template test://notes/{name}  note (text/plain): A note by its name") {
		t.Errorf("listing: %+v", res)
	}
	// A template's URI, filled in, reads like any resource.
	if res := read.Run(context.Background(), json.RawMessage(`{"server":"go","uri":"test://notes/todo"}`)); res.IsError || !strings.Contains(res.Content, "the note called todo") {
		t.Errorf("read through a template: %+v", res)
	}
	acc, err := read.Access(json.RawMessage(`{"server":"go","uri":"test://readme"}`))
	if err != nil || acc.Tool != "mcp__go__@resource" || !acc.ReadOnly {
		t.Errorf("a read's access: %+v %v", acc, err)
	}
	if _, err := read.Access(json.RawMessage(`{"server":"nope","uri":"x://y"}`)); err == nil || !strings.Contains(err.Error(), "the servers: go") {
		t.Errorf("an unknown server's read: %v", err)
	}
	if res := read.Run(context.Background(), json.RawMessage(`{"server":"go","uri":"test://readme"}`)); res.IsError || res.Content != "[resource test://readme]\nthe readme" {
		t.Errorf("read: %+v", res)
	}
	if res := read.Run(context.Background(), json.RawMessage(`{"server":"go","uri":"test://nothing"}`)); !res.IsError || !strings.Contains(res.Content, "MCP server go, resource test://nothing") {
		t.Errorf("read of a missing resource: %+v", res)
	}
}

// TestImagesNotTaken: for a model that takes no images, an image is
// described in words, never sent.
func TestImagesNotTaken(t *testing.T) {
	f := newFixture(t)
	m := start(t, f.open(t, sandbox.BackendNone), Options{}, f.goServer("go", "full"))
	img := run(t, m.Tools(false), "mcp__go__image", `{}`)
	if img.IsError || img.Image != nil || !strings.Contains(img.Content, "[image image/png, ") || !strings.Contains(img.Content, "this model does not take images") {
		t.Errorf("image for a model without images: %+v", img)
	}
}

// TestRender: every kind of content becomes what the model gets.
func TestRender(t *testing.T) {
	png := mcptest.PNG()
	for _, tc := range []struct {
		name    string
		content []sdk.Content
		images  bool
		want    string
		image   bool
	}{
		{"text", []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}, true, "a\nb", false},
		{"two images", []sdk.Content{&sdk.ImageContent{Data: png, MIMEType: "image/png"}, &sdk.ImageContent{Data: png, MIMEType: "image/png"}}, true,
			"[image content 1, 2x2, shown to you as an image]\n[image image/png, " + itoa(len(png)) + " bytes, not shown: one image per result reaches the model]", true},
		{"not an image", []sdk.Content{&sdk.ImageContent{Data: []byte("nope"), MIMEType: "image/png"}}, true, "[image image/png, 4 bytes, not shown: content 1 is not an image", false},
		{"audio", []sdk.Content{&sdk.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"}}, true, "[audio audio/wav, 4 bytes, not given: harness passes no audio to models]", false},
		{"link", []sdk.Content{&sdk.ResourceLink{URI: "file:///a", Name: "a"}}, true, "[resource file:///a a]", false},
		{"text blob", []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "x://t", MIMEType: "text/plain", Blob: []byte("hi")}}}, true, "[resource x://t]\nhi", false},
		{"binary blob", []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "x://b", MIMEType: "application/gzip", Blob: []byte{0x1f, 0x8b, 0, 0xff}}}}, true, "[resource x://b: application/gzip, 4 bytes, not shown; base64 begins H4sA/w==]", false},
		{"nothing", nil, true, "(no output)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, img := render(&sdk.CallToolResult{Content: tc.content}, tc.images)
			if !strings.HasPrefix(got, tc.want) || (img != nil) != tc.image {
				t.Errorf("got %q (image %v), want %q (image %v)", got, img != nil, tc.want, tc.image)
			}
		})
	}
}

// TestDropBadAncillary: a PNG whose colour profile's checksum is wrong
// (the everything server's sample image) decodes once that chunk is
// dropped; a bad checksum in the pixels is not repaired.
func TestDropBadAncillary(t *testing.T) {
	good := mcptest.PNG()
	// An iCCP chunk with a wrong checksum after IHDR (8+25 bytes).
	bad := append(append([]byte(nil), good[:33]...), 0, 0, 0, 3, 'i', 'C', 'C', 'P', 1, 2, 3, 0xde, 0xad, 0xbe, 0xef)
	bad = append(bad, good[33:]...)
	if _, img := render(&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: bad, MIMEType: "image/png"}}}, true); img == nil {
		t.Error("the PNG with a bad iCCP checksum was not shown")
	}
	if fixed := dropBadAncillary(bad); !bytes.Equal(fixed, good) {
		t.Errorf("repaired: %d bytes, want the %d of the good image", len(fixed), len(good))
	}
	idat := bytes.Index(good, []byte("IDAT"))
	broken := append([]byte(nil), good...)
	broken[idat+4] ^= 0xff // the pixels' data, under a checksum that no longer matches
	if dropBadAncillary(broken) != nil {
		t.Error("a bad critical chunk was repaired")
	}
	if _, img := render(&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: broken, MIMEType: "image/png"}}}, true); img != nil {
		t.Error("a PNG with broken pixels was shown")
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestInstructionsBudget: each server's instructions are cut at
// InstructionsPerServer bytes, all of them at InstructionsTotal, and the
// cuts say so; servers without instructions add nothing.
func TestInstructionsBudget(t *testing.T) {
	m := &Manager{}
	add := func(name, text string) {
		m.servers = append(m.servers, &conn{def: Server{Name: name}, m: m, init: &sdk.InitializeResult{Instructions: text}})
	}
	add("a", "short")
	add("b", "")
	add("c", strings.Repeat("é", InstructionsPerServer)) // two bytes each: cut on a character
	for i := range 6 {
		add(string(rune('d'+i)), strings.Repeat("x", InstructionsPerServer))
	}
	got := m.Instructions()
	if len(got) > InstructionsTotal+200 {
		t.Errorf("%d bytes, over the budget of %d", len(got), InstructionsTotal)
	}
	for _, want := range []string{"## a\nshort\n", "[cut: the server's instructions are 4096 bytes; harness keeps 2048]", "are left out: all servers' instructions are kept within 8192 bytes"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%.300s", want, got)
		}
	}
	if strings.Contains(got, "## b") || !strings.Contains(got, "## c\n") {
		t.Errorf("servers: %.100q", got)
	}
	if !strings.HasPrefix(got, "## a") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("a character was split: %.100q", got)
	}
}

// TestInstructionsToldOnce: a server that connected after the system
// prompt was built (started beside the session) has its instructions
// told with the first mcp_search answer that lists one of its tools, and
// only then; one already in the system prompt is not told again; a
// server not in the answer is not told.
func TestInstructionsToldOnce(t *testing.T) {
	m := &Manager{}
	add := func(name, text string) {
		m.servers = append(m.servers, &conn{def: Server{Name: name}, m: m, tools: []*Tool{{Name: "do_" + name, Description: "does " + name}},
			init: &sdk.InitializeResult{Instructions: text}})
	}
	add("early", "EARLY RULES") // connected when the prompt is built
	if got := m.Instructions(); !strings.Contains(got, "EARLY RULES") {
		t.Fatalf("system prompt instructions: %q", got)
	}
	add("late", "LATE RULES") // connected since
	add("other", "OTHER RULES")

	first := m.Search("late", "")
	if !strings.Contains(first, "LATE RULES") || strings.Contains(first, "EARLY RULES") || strings.Contains(first, "OTHER RULES") {
		t.Errorf("first search for late's tool:\n%s", first)
	}
	if again := m.Search("late", ""); strings.Contains(again, "LATE RULES") {
		t.Errorf("told twice:\n%s", again)
	}
	if all := m.Search("", ""); !strings.Contains(all, "OTHER RULES") || strings.Contains(all, "LATE RULES") || strings.Contains(all, "EARLY RULES") {
		t.Errorf("listing every tool:\n%s", all)
	}
}

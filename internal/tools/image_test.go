package tools

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePNG(t *testing.T, path string, w, h int) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadFileImage(t *testing.T) {
	env, proj := newEnv(t)
	writePNG(t, filepath.Join(proj, "shot.png"), 2400, 1200)
	allow := GateFunc(func(context.Context, Access) (bool, string) { return true, "" })

	env.Images = true
	b := NewRegistry(allow, Builtins(env)...).Run(context.Background(), call("read_file", `{"path":"shot.png"}`))
	if b.IsError || b.Image == nil {
		t.Fatalf("no image returned: %+v", b)
	}
	if b.Image.Width != 1568 || b.Image.Height != 784 || !strings.Contains(b.Content, "scaled down from 2400x1200") {
		t.Errorf("got %dx%d, %q", b.Image.Width, b.Image.Height, b.Content)
	}
	if !strings.Contains((&ReadFile{Env: env}).Spec().Description, "shown to you as images") {
		t.Error("the spec does not say images are shown")
	}

	env.Images = false
	b = NewRegistry(allow, Builtins(env)...).Run(context.Background(), call("read_file", `{"path":"shot.png"}`))
	if !b.IsError || b.Image != nil || !strings.Contains(b.Content, "does not take images") {
		t.Fatalf("a model without images got: %+v", b)
	}
}

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/llm"
)

// pathRe finds a bare absolute path to an image, as a terminal types it
// when a file is dropped on it (possibly quoted).
var pathRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|\s)['"]?(/[^\s'"]+\.(?i:png|jpe?g|gif|webp))['"]?`)
})

// mention is one file a prompt names: @path, or a bare absolute path to
// an image.
type mention struct {
	name string
	bare bool
}

// mentions lists the @path mentions of a prompt, then its bare absolute
// image paths.
func mentions(prompt string) []mention {
	var out []mention
	for _, m := range mentionRe().FindAllStringSubmatch(prompt, -1) {
		out = append(out, mention{name: m[1]})
	}
	for _, m := range pathRe().FindAllStringSubmatch(prompt, -1) {
		if !strings.Contains(prompt, "@"+m[1]) {
			out = append(out, mention{name: m[1], bare: true})
		}
	}
	return out
}

// attachImage loads one image the user named, or says why not.
func attachImage(name, real string, hidden []string, withImages bool) (*llm.Image, string) {
	if !withImages {
		return nil, fmt.Sprintf("%s is an image and this model does not take images, as far as the model catalogue knows (harness models): not attached; "+
			"if it does, declare it in ~/.agents/models.json with \"images\": true", name)
	}
	if isHidden(real, hidden) {
		return nil, fmt.Sprintf("%s is hidden by the sandbox: not attached", name)
	}
	img, err := loadImage(real)
	if err != nil {
		return nil, err.Error()
	}
	img.Name = filepath.Base(real)
	return img, "attached " + img.Describe()
}

// loadImage reads and prepares one image file.
func loadImage(path string) (*llm.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, llm.MaxImageInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > llm.MaxImageInput {
		return nil, fmt.Errorf("%s is over %d MB: not an image harness sends", path, llm.MaxImageInput>>20)
	}
	return llm.PrepareImage(filepath.Base(path), data)
}

// takesImages reports whether the catalogue (the built-in one with the
// user's models.json beside envFile laid over it) says model takes
// images.
func takesImages(envFile, model string) bool {
	cat, err := userCatalogue(envFile)
	if err != nil {
		cat = llm.DefaultCatalogue() // said at start
	}
	m, ok := cat.Lookup(model)
	return ok && m.Images
}

// declareImages is how to tell harness that model takes images.
func declareImages(model string) string {
	return fmt.Sprintf(`if it does, declare it in ~/.agents/models.json: {"models":[{"name":%q,"images":true}]}`, model)
}

// loadRunImages loads the --image files of harness run.
func loadRunImages(envFile, model string, paths []string) ([]*llm.Image, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if !takesImages(envFile, model) {
		return nil, usageError("--image: %s does not take images, as far as the model catalogue knows (harness models); %s", model, declareImages(model))
	}
	var out []*llm.Image
	for _, p := range paths {
		img, err := loadImage(p)
		if err != nil {
			return nil, usageError("--image %s: %v", p, err)
		}
		out = append(out, img)
	}
	return out, nil
}

package tools

import "github.com/harness-dev/harness/internal/llm"

func (r *ReadFile) imagesNote() string {
	if r.Env == nil || !r.Env.Images {
		return ""
	}
	return " Images (PNG, JPEG, GIF, WebP: screenshots, diagrams) are shown to you as images, scaled to at most 1568 px."
}

// image answers read_file of an image: the picture itself for a model
// that takes images, else a refusal that says why.
func (r *ReadFile) image(name string, data []byte) Result {
	if !r.Env.Images {
		return Errorf("%s is an image (%d bytes), and this model does not take images; use bash (file, identify) to inspect it", name, len(data))
	}
	img, err := llm.PrepareImage(name, data)
	if err != nil {
		return Errorf("%v", err)
	}
	return Result{Content: img.Describe() + " (shown to you as an image)", Image: img}
}

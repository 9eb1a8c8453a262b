package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif"  // formats the real servers take
	_ "image/jpeg" //
	_ "image/png"  //
	"strings"

	_ "golang.org/x/image/webp" //
)

// ImageSeen is an image a request carried, decoded by the fake server.
type ImageSeen struct {
	MediaType     string
	Width, Height int
	Bytes         int // decoded size
	// Where says where it was: "image" (Anthropic user block),
	// "tool_result" (Anthropic, inside a result), "image_url" (Chat
	// Completions part) or "input_image" (Responses part).
	Where string
}

// The limits the real servers enforce on an image, and their error texts:
// Anthropic answers 400 invalid_request_error for base64 over 5 MB
// ("image exceeds 5 MB maximum") and for a side over 8000 px ("image
// dimensions exceed max allowed size: 8000 pixels"), and takes only JPEG,
// PNG, GIF and WebP, the media_type matching the data; OpenAI answers 400
// invalid_request_error for an image_url that is not a URL or a base64
// data URL of such an image ("Invalid image").
const (
	maxImageBase64 = 5 * 1024 * 1024
	maxImageSide   = 8000
)

// checkImages finds every image in a request body and checks it as the
// real server would: the images seen, or a status and error body.
func checkImages(f Format, body []byte) ([]ImageSeen, int, string) {
	var root any
	if json.Unmarshal(body, &root) != nil {
		return nil, 0, ""
	}
	var seen []ImageSeen
	var errMsg string
	var walk func(v any, where string)
	walk = func(v any, where string) {
		if errMsg != "" {
			return
		}
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e, where)
			}
		case map[string]any:
			typ, _ := x["type"].(string)
			switch {
			case f == FormatAnthropic && typ == "image":
				src, _ := x["source"].(map[string]any)
				w := "image"
				if where == "tool_result" {
					w = where
				}
				im, err := anthropicImage(src)
				if err != nil {
					errMsg = err.Error()
					return
				}
				im.Where = w
				seen = append(seen, im)
				return
			case f != FormatAnthropic && typ == "image_url":
				u, _ := x["image_url"].(map[string]any)
				s, _ := u["url"].(string)
				im, err := dataURLImage(s)
				if err != nil {
					errMsg = err.Error()
					return
				}
				im.Where = typ
				seen = append(seen, im)
				return
			case f != FormatAnthropic && typ == "input_image":
				s, _ := x["image_url"].(string)
				im, err := dataURLImage(s)
				if err != nil {
					errMsg = err.Error()
					return
				}
				im.Where = typ
				seen = append(seen, im)
				return
			}
			if typ == "tool_result" {
				where = "tool_result"
			}
			for _, e := range x {
				walk(e, where)
			}
		}
	}
	walk(root, "")
	if errMsg == "" {
		return seen, 0, ""
	}
	if f == FormatAnthropic {
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": errMsg}})
		return seen, 400, string(b)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": "invalid_image", "message": errMsg, "param": nil}})
	return seen, 400, string(b)
}

func anthropicImage(src map[string]any) (ImageSeen, error) {
	if src == nil || src["type"] != "base64" {
		return ImageSeen{}, fmt.Errorf("image.source: only base64 sources are served by this fake")
	}
	data, _ := src["data"].(string)
	mt, _ := src["media_type"].(string)
	if len(data) > maxImageBase64 {
		return ImageSeen{}, fmt.Errorf("image exceeds 5 MB maximum: %d bytes > %d bytes", len(data), maxImageBase64)
	}
	return decodeImage(mt, data)
}

func dataURLImage(u string) (ImageSeen, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	mt, data, ok2 := strings.Cut(rest, ";base64,")
	if !ok || !ok2 {
		return ImageSeen{}, apiErr("Invalid image: expected a base64 data URL")
	}
	return decodeImage(mt, data)
}

func decodeImage(mt, data string) (ImageSeen, error) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return ImageSeen{}, apiErr("Invalid image: the data is not valid base64")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return ImageSeen{}, apiErr("Invalid image: could not process image")
	}
	if want := "image/" + format; mt != want {
		return ImageSeen{}, apiErr("Image does not match the provided media type %s", mt)
	}
	if cfg.Width > maxImageSide || cfg.Height > maxImageSide {
		return ImageSeen{}, fmt.Errorf("image dimensions exceed max allowed size: %d pixels", maxImageSide)
	}
	return ImageSeen{MediaType: mt, Width: cfg.Width, Height: cfg.Height, Bytes: len(raw)}, nil
}

// apiErr is an error whose text is the real server's message, capitals
// and all.
type apiError string

func (e apiError) Error() string { return string(e) }

func apiErr(format string, a ...any) error { return apiError(fmt.Sprintf(format, a...)) }

package llm

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/gif" // GIF (its first frame)
	"image/jpeg"
	"image/png"
	"path/filepath"
	"strings"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // decode WebP screenshots too
)

// Image is a picture sent to the model, already within every provider's
// limits (PrepareImage), base64-encoded once so the request bytes are the
// same every time it is sent.
type Image struct {
	Name      string `json:"name,omitempty"` // the file it came from, for stubs and the UI
	MediaType string `json:"media_type"`     // image/png or image/jpeg
	Data      string `json:"data"`           // base64 (standard encoding)
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	// OrigWidth and OrigHeight are set when the image was scaled down.
	OrigWidth  int `json:"orig_width,omitempty"`
	OrigHeight int `json:"orig_height,omitempty"`
}

// The limits every adapter's provider accepts, taken as the tightest of
// them: Anthropic rejects an image whose base64 is over 5 MB and, in a
// request with many images, a side over 2000 px, and scales down anything
// with a long edge over 1568 px itself (so more only costs upload); OpenAI
// fits high-detail images into 2048x2048 and then 768 px on the short side.
// Sending at most 1568 px on the long edge and 3.75 MB of raw bytes keeps
// every provider's answer the same and no pixel is paid for twice.
const (
	MaxImageEdge  = 1568
	MaxImageBytes = 5 * 1024 * 1024 * 3 / 4
	// MaxImageInput bounds the file read before decoding.
	MaxImageInput = 50 << 20
)

// IsImagePath reports whether a file name looks like an image harness can
// send (by extension; the content decides in PrepareImage).
func IsImagePath(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// PrepareImage decodes data (PNG, JPEG, GIF's first frame, WebP), scales
// it down to MaxImageEdge on its long edge when larger, and encodes it as
// PNG (kept when small enough: screenshots of text stay sharp) or JPEG.
func PrepareImage(name string, data []byte) (*Image, error) {
	src, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s is not an image harness can read (PNG, JPEG, GIF, WebP): %w", name, err)
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("%s: empty image", name)
	}
	img := &Image{Name: name, Width: w, Height: h}
	scaled := false
	if long := max(w, h); long > MaxImageEdge {
		nw, nh := max(1, w*MaxImageEdge/long), max(1, h*MaxImageEdge/long)
		dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
		src, scaled = dst, true
		img.OrigWidth, img.OrigHeight, img.Width, img.Height = w, h, nw, nh
	}
	var out []byte
	switch {
	case !scaled && (format == "png" || format == "jpeg") && len(data) <= MaxImageBytes:
		out = data // already fine: sent as it is
		img.MediaType = "image/" + format
	default:
		var buf bytes.Buffer
		if format != "jpeg" {
			if err := png.Encode(&buf, src); err == nil && buf.Len() <= MaxImageBytes {
				out, img.MediaType = buf.Bytes(), "image/png"
			}
		}
		for q := 90; out == nil && q >= 30; q -= 20 {
			buf.Reset()
			if err := jpeg.Encode(&buf, src, &jpeg.Options{Quality: q}); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if buf.Len() <= MaxImageBytes {
				out, img.MediaType = buf.Bytes(), "image/jpeg"
			}
		}
		if out == nil {
			return nil, fmt.Errorf("%s: cannot be made smaller than %d bytes", name, MaxImageBytes)
		}
	}
	img.Data = base64.StdEncoding.EncodeToString(out)
	return img, nil
}

// DataURL is the image as a data: URL (OpenAI's formats).
func (i *Image) DataURL() string { return "data:" + i.MediaType + ";base64," + i.Data }

// Describe says what the image is, for text beside it and for stubs.
func (i *Image) Describe() string {
	s := fmt.Sprintf("image %s, %dx%d", i.Name, i.Width, i.Height)
	if i.OrigWidth > 0 {
		s += fmt.Sprintf(" (scaled down from %dx%d)", i.OrigWidth, i.OrigHeight)
	}
	return s
}

// Tokens estimates what the image costs in input tokens: Anthropic's
// documented (width × height) / 750.
func (i *Image) Tokens() int { return i.Width * i.Height / 750 }

// ImageBlock returns a user-message block holding img.
func ImageBlock(img *Image) Block { return Block{Type: BlockImage, Image: img} }

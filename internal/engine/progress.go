package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/moby/moby/api/types/jsonstream"
)

// ProgressError is an error the engine reported inside a build's or an
// import's progress stream (the request itself was taken: a failed build
// step, say), with the last line of output before it.
type ProgressError struct {
	Message string
	After   string // the last "stream" line before the error, if any
}

func (e *ProgressError) Error() string {
	if e.After != "" {
		return fmt.Sprintf("%s (after: %s)", e.Message, e.After)
	}
	return e.Message
}

// Progress reads the engine's progress stream (the body of
// client.ImageBuild's or client.ImageImport's answer: JSON messages) to
// its end and closes it. The engine answers 200 before it builds, so a
// failure is only in the stream: that is a *ProgressError.
func Progress(body io.ReadCloser) error {
	defer body.Close()
	dec := json.NewDecoder(body)
	var last string
	for {
		var m jsonstream.Message
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading the engine's progress: %w", err)
		}
		if s := strings.TrimSpace(m.Stream); s != "" {
			last = s
		}
		if m.Error != nil && m.Error.Message != "" {
			return &ProgressError{Message: strings.TrimSpace(m.Error.Message), After: last}
		}
	}
}

package engine

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestProgress: the engine's stream of JSON messages read to its end; an
// error inside it is a ProgressError with the output line before it; a
// stream that is not JSON is an error of another kind.
func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		want         string // the error; "" for none
		progress     bool   // a *ProgressError
	}{
		{"built", `{"stream":"Step 1/1 : FROM base\n"}` + "\n" + `{"stream":"Successfully built 0123\n"}` + "\n", "", false},
		{"imported", `{"status":"sha256:0123"}` + "\n", "", false},
		{"empty", "", "", false},
		{"a failed step", `{"stream":"Step 2/2 : RUN false\n"}` + "\n" +
			`{"errorDetail":{"code":1,"message":"The command '/bin/sh -c false' returned a non-zero code: 1"},"error":"The command '/bin/sh -c false' returned a non-zero code: 1"}` + "\n",
			"The command '/bin/sh -c false' returned a non-zero code: 1 (after: Step 2/2 : RUN false)", true},
		{"an error before any output", `{"errorDetail":{"message":"no space left on device"}}`, "no space left on device", true},
		{"not JSON", "<html>", "reading the engine's progress", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Progress(io.NopCloser(strings.NewReader(tc.stream)))
			var pe *ProgressError
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) || errors.As(err, &pe) != tc.progress {
				t.Errorf("got %v, want %q (a ProgressError: %v)", err, tc.want, tc.progress)
			}
		})
	}
}

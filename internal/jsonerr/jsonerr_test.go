package jsonerr

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestAt(t *testing.T) {
	for _, tc := range []struct {
		in         string
		line, col  int
		wantPlaced bool
	}{
		{"{\n  \"a\": 1,\n  \"b\": ,\n}", 3, 8, true},
		{"{\"models\": [\n  {\"name\": 5}\n]}", 2, 12, true},
		{"{\n  \"a\": 1", 2, 8, true},
	} {
		var v struct {
			Models []struct{ Name string } `json:"models"`
		}
		err := At([]byte(tc.in), json.Unmarshal([]byte(tc.in), &v))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: %v, want a placed error", tc.in, err)
			continue
		}
		if e.Line != tc.line || e.Column != tc.col {
			t.Errorf("%q: line %d, column %d; want %d, %d", tc.in, e.Line, e.Column, tc.line, tc.col)
		}
	}
	if err := At(nil, errors.New("other")); err.Error() != "other" {
		t.Errorf("an unplaced error changed: %v", err)
	}
}

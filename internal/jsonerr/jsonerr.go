// Package jsonerr says where in a JSON file a decoding error is: every
// file harness reads settings from names the line and column of its
// error, so the user can go straight to it.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Error is a JSON error at a place in its input.
type Error struct {
	Line, Column int // 1-based
	Err          error
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d: %v", e.Line, e.Column, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// At returns err with the line and column it happened at in data, when
// encoding/json said where (a syntax error, a value of the wrong type);
// other errors are returned as they are.
func At(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(data))
	}
	if off < 0 {
		return err
	}
	off = min(off, int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return &Error{Line: line, Column: col, Err: err}
}

package tools

import (
	"bytes"
	"io"

	"golang.org/x/net/html/charset"
)

// decodeBody returns body in UTF-8, decoded as the HTML standard says a
// page's encoding is found (golang.org/x/net/html/charset, with
// golang.org/x/text's decoders and the WHATWG labels): a byte-order mark,
// then the Content-Type's charset, then a <meta> in the first 1024 bytes,
// then UTF-8 when those bytes are valid UTF-8, else windows-1252. The
// byte-order mark, which the decoders keep as U+FEFF, is dropped. Body
// itself when it cannot be decoded.
func decodeBody(body []byte, contentType string) []byte {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return body
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return body
	}
	return bytes.TrimPrefix(b, []byte("\ufeff"))
}

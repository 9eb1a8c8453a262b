package mcp

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

// pngSignature begins every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// dropBadAncillary is a PNG without its ancillary chunks (colour
// profile, text, metadata: the ones a decoder may skip) whose checksum is
// wrong, or nil when it is not a PNG or has nothing to drop. Go's decoder
// refuses a PNG with any bad checksum; the reference everything server's
// sample image has a bad one in its iCCP chunk, and its pixels are fine.
// A critical chunk with a bad checksum is left as it is, and the image
// refused.
func dropBadAncillary(data []byte) []byte {
	if !bytes.HasPrefix(data, pngSignature) {
		return nil
	}
	out := append([]byte(nil), pngSignature...)
	dropped := false
	for i := len(pngSignature); i < len(data); {
		if i+12 > len(data) {
			return nil
		}
		n := int(binary.BigEndian.Uint32(data[i:]))
		if n < 0 || n > len(data)-i-12 {
			return nil
		}
		chunk := data[i : i+12+n]
		ancillary := chunk[4]&0x20 != 0
		if ancillary && crc32.ChecksumIEEE(chunk[4:8+n]) != binary.BigEndian.Uint32(chunk[8+n:]) {
			dropped = true
		} else {
			out = append(out, chunk...)
		}
		i += 12 + n
	}
	if !dropped {
		return nil
	}
	return out
}

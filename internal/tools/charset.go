package tools

import (
	"bytes"
	"mime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

// The web fetch's charset decoding, in the HTML standard's order as
// golang.org/x/net/html/charset has it: a byte-order mark, then the
// Content-Type's charset, then a <meta> in the first 1024 bytes, then UTF-8
// when those bytes are valid UTF-8 with a high bit set, else windows-1252.
// Every encoding of the WHATWG Encoding Standard is kept, the legacy CJK
// ones included (GB 2312, Shift JIS, GBK and Big5 together are still about
// 0.5% of the top million sites by BuiltWith's count). What this leaves out
// is golang.org/x/text/encoding/htmlindex, whose language matcher and
// tables (golang.org/x/text/language) were initialised in every harness
// process, sandbox re-execs included: 0.4 ms of a 3.7 ms `harness
// --version`, paired (scripts/startup.go).

// charsetEntry is one encoding of the standard: its name and decoder.
type charsetEntry struct {
	name string
	enc  encoding.Encoding
}

// charsetLabels maps every label of the WHATWG Encoding Standard
// (https://encoding.spec.whatwg.org/#names-and-labels) to its encoding, as
// golang.org/x/text/encoding/htmlindex maps them. Built on first use.
var charsetLabels = sync.OnceValue(func() map[string]charsetEntry {
	m := map[string]charsetEntry{}
	for _, e := range []struct {
		name   string
		enc    encoding.Encoding
		labels string
	}{
		{"utf-8", unicode.UTF8, "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"},
		{"ibm866", charmap.CodePage866, "866 cp866 csibm866 ibm866"},
		{"iso-8859-2", charmap.ISO8859_2, "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2"},
		{"iso-8859-3", charmap.ISO8859_3, "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3"},
		{"iso-8859-4", charmap.ISO8859_4, "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4"},
		{"iso-8859-5", charmap.ISO8859_5, "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 iso_8859-5:1988"},
		{"iso-8859-6", charmap.ISO8859_6, "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987"},
		{"iso-8859-7", charmap.ISO8859_7, "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek"},
		{"iso-8859-8", charmap.ISO8859_8, "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual"},
		{"iso-8859-8-i", charmap.ISO8859_8I, "csiso88598i iso-8859-8-i logical"},
		{"iso-8859-10", charmap.ISO8859_10, "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"},
		{"iso-8859-13", charmap.ISO8859_13, "iso-8859-13 iso8859-13 iso885913"},
		{"iso-8859-14", charmap.ISO8859_14, "iso-8859-14 iso8859-14 iso885914"},
		{"iso-8859-15", charmap.ISO8859_15, "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"},
		{"iso-8859-16", charmap.ISO8859_16, "iso-8859-16"},
		{"koi8-r", charmap.KOI8R, "cskoi8r koi koi8 koi8-r koi8_r"},
		{"koi8-u", charmap.KOI8U, "koi8-ru koi8-u"},
		{"macintosh", charmap.Macintosh, "csmacintosh mac macintosh x-mac-roman"},
		{"windows-874", charmap.Windows874, "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"},
		{"windows-1250", charmap.Windows1250, "cp1250 windows-1250 x-cp1250"},
		{"windows-1251", charmap.Windows1251, "cp1251 windows-1251 x-cp1251"},
		{"windows-1252", charmap.Windows1252, "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252"},
		{"windows-1253", charmap.Windows1253, "cp1253 windows-1253 x-cp1253"},
		{"windows-1254", charmap.Windows1254, "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254"},
		{"windows-1255", charmap.Windows1255, "cp1255 windows-1255 x-cp1255"},
		{"windows-1256", charmap.Windows1256, "cp1256 windows-1256 x-cp1256"},
		{"windows-1257", charmap.Windows1257, "cp1257 windows-1257 x-cp1257"},
		{"windows-1258", charmap.Windows1258, "cp1258 windows-1258 x-cp1258"},
		{"x-mac-cyrillic", charmap.MacintoshCyrillic, "x-mac-cyrillic x-mac-ukrainian"},
		{"gbk", simplifiedchinese.GBK, "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"},
		{"gb18030", simplifiedchinese.GB18030, "gb18030"},
		{"big5", traditionalchinese.Big5, "big5 big5-hkscs cn-big5 csbig5 x-x-big5"},
		{"euc-jp", japanese.EUCJP, "cseucpkdfmtjapanese euc-jp x-euc-jp"},
		{"iso-2022-jp", japanese.ISO2022JP, "csiso2022jp iso-2022-jp"},
		{"shift_jis", japanese.ShiftJIS, "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"},
		{"euc-kr", korean.EUCKR, "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 ksc_5601 windows-949"},
		{"replacement", encoding.Replacement, "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement"},
		{"utf-16be", unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), "unicodefffe utf-16be"},
		{"utf-16le", unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"},
		{"x-user-defined", charmap.XUserDefined, "x-user-defined"},
	} {
		for _, l := range strings.Fields(e.labels) {
			m[l] = charsetEntry{e.name, e.enc}
		}
	}
	return m
})

// lookupCharset returns the encoding a label names, or ok false.
func lookupCharset(label string) (charsetEntry, bool) {
	e, ok := charsetLabels()[strings.ToLower(strings.TrimSpace(label))]
	return e, ok
}

// decodeBody returns body in UTF-8, decoded from the encoding its
// Content-Type, byte-order mark or <meta> declares (see above); body
// itself when it is UTF-8 already or cannot be decoded.
func decodeBody(body []byte, contentType string) []byte {
	e := sniffCharset(body, contentType)
	if e == nil {
		return body
	}
	b, err := e.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return b
}

// sniffCharset decides body's encoding; nil means UTF-8 as it stands.
func sniffCharset(body []byte, contentType string) encoding.Encoding {
	head := body[:min(len(body), 1024)]
	for _, b := range []struct {
		bom   string
		label string
	}{{"\xfe\xff", "utf-16be"}, {"\xff\xfe", "utf-16le"}, {"\xef\xbb\xbf", "utf-8"}} {
		if bytes.HasPrefix(head, []byte(b.bom)) {
			e, _ := lookupCharset(b.label)
			return e.enc
		}
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if cs, ok := params["charset"]; ok {
			if e, ok := lookupCharset(cs); ok {
				return e.enc
			}
		}
	}
	if len(head) > 0 {
		if e, ok := metaCharset(head); ok {
			if strings.HasPrefix(e.name, "utf-16") {
				return nil // a page that says UTF-16 in ASCII bytes is not UTF-16
			}
			return e.enc
		}
	}
	// A character cut at the 1024th byte does not make the rest invalid.
	for i := len(head) - 1; i >= 0 && i > len(head)-4; i-- {
		if head[i] < 0x80 {
			break
		}
		if utf8.RuneStart(head[i]) {
			head = head[:i]
			break
		}
	}
	if slices.ContainsFunc(head, func(c byte) bool { return c >= 0x80 }) && utf8.Valid(head) {
		return nil
	}
	return charmap.Windows1252
}

// metaCharset is the HTML standard's prescan for a <meta charset> or a
// <meta http-equiv="content-type" content="…charset=…"> in head.
func metaCharset(head []byte) (charsetEntry, bool) {
	z := html.NewTokenizer(bytes.NewReader(head))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return charsetEntry{}, false
		case html.StartTagToken, html.SelfClosingTagToken:
			tag, more := z.TagName()
			if string(tag) != "meta" {
				continue
			}
			seen := map[string]bool{}
			var found charsetEntry
			ok, pragma, needPragma, decided := false, false, false, false
			for more {
				var key, val []byte
				key, val, more = z.TagAttr()
				k := string(key)
				if seen[k] {
					continue
				}
				seen[k] = true
				v := strings.ToLower(string(val))
				switch k {
				case "http-equiv":
					pragma = pragma || v == "content-type"
				case "content":
					if !ok {
						if label := charsetFromContent(v); label != "" {
							if found, ok = lookupCharset(label); ok {
								needPragma, decided = true, true
							}
						}
					}
				case "charset":
					found, ok = lookupCharset(v)
					needPragma, decided = false, true
				}
			}
			if !decided || needPragma && !pragma {
				continue
			}
			if ok {
				return found, true
			}
		}
	}
}

// charsetFromContent extracts the charset from a meta content attribute
// ("text/html; charset=shift_jis"), as the HTML standard's algorithm does.
func charsetFromContent(s string) string {
	for s != "" {
		i := strings.Index(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], " \t\n\f\r")
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return ""
			}
			return s[1 : 1+end]
		}
		if end := strings.IndexAny(s, "; \t\n\f\r"); end >= 0 {
			return s[:end]
		}
		return s
	}
	return ""
}

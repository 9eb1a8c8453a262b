package tools

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

// TestDecodeBody: the local decoding gives what golang.org/x/net/html/charset
// (which the web fetch used before) gives, byte for byte, on pages in the
// encodings that matter, declared every way a page can declare one.
func TestDecodeBody(t *testing.T) {
	sjis, _ := japanese.ShiftJIS.NewEncoder().String("日本語のページ")
	eucjp, _ := japanese.EUCJP.NewEncoder().String("日本語のページ")
	jis, _ := japanese.ISO2022JP.NewEncoder().String("日本語のページ")
	gbk, _ := simplifiedchinese.GBK.NewEncoder().String("中文网页")
	big5, _ := traditionalchinese.Big5.NewEncoder().String("中文網頁")
	euckr, _ := korean.EUCKR.NewEncoder().String("한국어 페이지")
	utf16le, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String("<p>héllo</p>")
	utf16be, _ := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().String("<p>héllo</p>")
	latin1 := "caf\xe9 na\xefve \x93quoted\x94"
	pad := strings.Repeat("<!-- padding -->", 70) // past the 1024 bytes the prescan reads

	type page struct{ body, ctype string }
	var pages []page
	for _, body := range []string{"<p>plain ascii</p>", "<p>café ✓</p>", latin1, sjis, eucjp, jis, gbk, big5, euckr, utf16le, utf16be,
		"\xef\xbb\xbf<p>bom café</p>", "", strings.Repeat("é", 600) + "\xe2\x9c"} {
		for _, ctype := range []string{"text/html", "text/html; charset=utf-8", "text/html; charset=ISO-8859-1", "text/html; charset=shift_jis",
			"text/html; charset=EUC-JP", "text/html; charset=gb2312", "text/html; charset=big5", "text/html; charset=euc-kr",
			"text/html; charset=no-such", "text/plain; charset=windows-1251", "text/html; charset=\"Shift_JIS\"", "text/html; charset=utf-16"} {
			pages = append(pages, page{body, ctype})
		}
		for _, meta := range []string{`<meta charset="shift_jis">`, `<meta charset=euc-kr>`, `<META CHARSET="GBK"/>`,
			`<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">`,
			`<meta content="text/html; charset=big5" http-equiv="content-type">`,
			`<meta content="text/html; charset=big5">`, // no pragma: ignored
			`<meta charset="utf-16le">`, `<meta charset="nonsense"><meta charset="iso-8859-2">`,
			`<meta http-equiv="content-type" content='text/html;charset = "windows-1250"'>`, `<meta charset="x-user-defined">`,
			pad + `<meta charset="shift_jis">`} {
			pages = append(pages, page{"<html><head>" + meta + "</head><body>" + body, "text/html"})
		}
	}
	for _, p := range pages {
		want := []byte(p.body)
		if r, err := charset.NewReader(strings.NewReader(p.body), p.ctype); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				want = b
			}
		}
		if got := decodeBody([]byte(p.body), p.ctype); !bytes.Equal(got, want) {
			t.Errorf("%q as %q:\n got %q\nwant %q", p.body, p.ctype, got, want)
		}
	}
}

// TestCharsetLabels: every label maps to the encoding htmlindex maps it to.
func TestCharsetLabels(t *testing.T) {
	n := 0
	for label, e := range charsetLabels() {
		want, err := htmlindex.Get(label)
		if err != nil {
			t.Errorf("%s: htmlindex does not know it: %v", label, err)
			continue
		}
		if name, _ := htmlindex.Name(want); name != e.name {
			t.Errorf("%s: %s, htmlindex says %s", label, e.name, name)
		}
		n++
	}
	if n < 200 {
		t.Errorf("%d labels, the standard has over 200", n)
	}
}

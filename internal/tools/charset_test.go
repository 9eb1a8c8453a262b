package tools

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

// TestDecodeBody: pages in the encodings that matter, declared every way
// a page declares one, come out as the UTF-8 text they were written in.
func TestDecodeBody(t *testing.T) {
	sjis, _ := japanese.ShiftJIS.NewEncoder().String("日本語のページ")
	eucjp, _ := japanese.EUCJP.NewEncoder().String("日本語のページ")
	jis, _ := japanese.ISO2022JP.NewEncoder().String("日本語のページ")
	gbk, _ := simplifiedchinese.GBK.NewEncoder().String("中文网页")
	big5, _ := traditionalchinese.Big5.NewEncoder().String("中文網頁")
	euckr, _ := korean.EUCKR.NewEncoder().String("한국어 페이지")
	utf16le, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String("<p>héllo</p>")
	utf16be, _ := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().String("<p>héllo</p>")
	pad := strings.Repeat("<!-- padding -->", 70) // past the 1024 bytes the prescan reads
	tests := []struct {
		name, body, ctype, want string
	}{
		{"utf-8 as it is", "<p>café ✓</p>", "text/html", "<p>café ✓</p>"},
		{"ascii", "<p>plain</p>", "text/html; charset=utf-8", "<p>plain</p>"},
		{"Content-Type shift_jis", sjis, "text/html; charset=shift_jis", "日本語のページ"},
		{"Content-Type quoted", sjis, `text/html; charset="Shift_JIS"`, "日本語のページ"},
		{"Content-Type big5", big5, "text/html; charset=big5", "中文網頁"},
		{"Content-Type gb2312 is GBK", gbk, "text/html; charset=gb2312", "中文网页"},
		{"ISO-2022-JP", jis, "text/plain; charset=iso-2022-jp", "日本語のページ"},
		{"meta charset", `<meta charset=euc-kr>` + euckr, "text/html", `<meta charset=euc-kr>` + "한국어 페이지"},
		{"meta charset upper case", `<META CHARSET="GBK"/>` + gbk, "text/html", `<META CHARSET="GBK"/>` + "中文网页"},
		{"meta http-equiv", `<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">` + eucjp, "text/html",
			`<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">` + "日本語のページ"},
		{"meta content without pragma is ignored", `<meta content="text/html; charset=big5">` + big5, "text/html",
			`<meta content="text/html; charset=big5">` + "\u00a4\u00a4\u00a4\u00e5\u00ba\u00f4\u00ad\u00b6"},
		{"meta past 1024 bytes is ignored", pad + `<meta charset="shift_jis">` + "caf\xe9", "text/html", pad + `<meta charset="shift_jis">` + "café"},
		{"Content-Type before meta", `<meta charset="shift_jis">` + "caf\xe9", "text/html; charset=iso-8859-1", `<meta charset="shift_jis">` + "café"},
		{"undeclared latin1 is windows-1252", "caf\xe9 na\xefve \x93quoted\x94", "text/html", "café naïve “quoted”"},
		{"unknown label: sniffed", "caf\xe9", "text/html; charset=no-such", "café"},
		{"utf-16le BOM", utf16le, "text/html", "<p>héllo</p>"},
		{"utf-16be BOM over Content-Type", utf16be, "text/html; charset=iso-8859-1", "<p>héllo</p>"},
		{"utf-8 BOM dropped", "\xef\xbb\xbf<p>bom café</p>", "text/html", "<p>bom café</p>"},
		{"empty", "", "text/html", ""},
	}
	for _, tt := range tests {
		if got := string(decodeBody([]byte(tt.body), tt.ctype)); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

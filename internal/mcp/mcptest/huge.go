package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// HugeKind is the stdio server (KindEnv) that answers by hand, without the
// SDK, so that an answer of any size streams from a small buffer: its tool
// "huge" answers with one line of n bytes (n in its arguments) that is a
// valid JSON-RPC answer, "endless" with a line that never ends, and "echo"
// as the SDK server's does.
const HugeKind = "huge"

func runHuge(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	w := bufio.NewWriterSize(out, 1<<20)
	answer := func(id json.RawMessage, result string) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
	}
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
				Arguments       struct {
					N    int    `json:"n"`
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue // a notification
		}
		switch m.Method {
		case "initialize":
			v, _ := json.Marshal(m.Params.ProtocolVersion)
			answer(m.ID, `{"protocolVersion":`+string(v)+`,"capabilities":{"tools":{}},"serverInfo":{"name":"huge","version":"1"}}`)
		case "ping":
			answer(m.ID, `{}`)
		case "tools/list":
			answer(m.ID, `{"tools":[{"name":"huge","inputSchema":{"type":"object"}},{"name":"endless","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			switch m.Params.Name {
			case "huge", "endless":
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID)
				chunk := bytes.Repeat([]byte("x"), 1<<20)
				for n := m.Params.Arguments.N; n > 0 || m.Params.Name == "endless"; n -= len(chunk) {
					k := len(chunk)
					if m.Params.Name == "huge" {
						k = min(n, k)
					}
					if _, err := w.Write(chunk[:k]); err != nil {
						return err
					}
				}
				w.WriteString(`"}]}}` + "\n")
			default:
				t, _ := json.Marshal("echo: " + m.Params.Arguments.Text)
				answer(m.ID, `{"content":[{"type":"text","text":`+string(t)+`}]}`)
			}
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s"}}`+"\n", m.ID, m.Method)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

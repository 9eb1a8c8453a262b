package doors

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/shellquote"
)

func init() {
	register(probe{
		name: "net: a one-shot run reaches the allowed port",
		live: true,
		run: func(ctx context.Context, w *world) (string, string) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return "", "could not listen on loopback: " + err.Error()
			}
			defer ln.Close()
			other, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return "", "could not listen on loopback: " + err.Error()
			}
			defer other.Close()
			go serve(ln, "reached-allowed")
			go serve(other, "reached-other")
			port, otherPort := ln.Addr().(*net.TCPAddr).Port, other.Addr().(*net.TCPAddr).Port
			live := walls.NewLive(w.pol) // this door's session: the gate and the sandbox share it
			o := permission.Options{Policy: live, Home: w.home, AllowNet: []string{fmt.Sprintf("127.0.0.1:%d", port)}}
			gate, err := permission.New(o)
			if err != nil {
				return "", "no gate: " + err.Error()
			}
			px, err := permission.NewProxy(o, func() *permission.Gate { return gate }, nil)
			if err != nil {
				return "", "no proxy: " + err.Error()
			}
			sb, err := sandbox.Open(ctx, live, w.backend, append([]sandbox.Option{sandbox.WithProxy(px)}, w.opts...)...)
			if err != nil {
				return "", "no sandbox: " + err.Error()
			}
			defer sb.Close()
			script := fmt.Sprintf(`for p in %d %d; do (exec 3<>/dev/tcp/127.0.0.1/$p && head -c 20 <&3) 2>/dev/null; echo; done`, port, otherPort)
			r, err := sb.Run(ctx, sandbox.Cmd{Script: "exec bash -c " + shellquote.Quote(script), Timeout: 20 * time.Second})
			if err != nil {
				return "", "the command did not run: " + err.Error()
			}
			switch out := string(r.Output); {
			case strings.Contains(out, "reached-other"):
				return "a loopback port no rule names was reached", ""
			case !strings.Contains(out, "reached-allowed"):
				// A rule of the user's that does nothing is a failure too.
				return "the port the user allowed was not reached: " + strings.TrimSpace(out), ""
			}
			return "", ""
		},
	})
}

func serve(ln net.Listener, greeting string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte(greeting))
		c.Close()
	}
}

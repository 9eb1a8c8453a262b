package engine

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeEngine is an engine for what harness adds to the client: the
// version it speaks (/_ping's API-Version), the path of every request,
// and execs behind exec start's hijacked connection, by id:
//
//   - "done" writes "out\n" to stdout and "err\n" to stderr and exits 3;
//   - "cat" writes the same, then echoes its stdin to stdout until stdin
//     ends, and exits 3;
//   - "deaf" writes "out\n" and runs on, whatever happens to its stdin,
//     until kill ends it (exit 137), as a command that ignores an
//     interrupt does.
type fakeEngine struct {
	t       *testing.T
	version string // /_ping's API-Version; "" says none

	mu    sync.Mutex
	paths []string // METHOD /path of every request
	execs map[string]*fakeExec
}

type fakeExec struct {
	running bool
	exit    *int
	killed  chan struct{}
}

func newFakeEngine(t *testing.T) *fakeEngine {
	f := &fakeEngine{t: t, version: "1.43", execs: map[string]*fakeExec{}}
	for _, id := range []string{"done", "cat", "deaf"} {
		f.execs[id] = &fakeExec{killed: make(chan struct{})}
	}
	return f
}

// listenUnix serves f on a unix socket and returns its DOCKER_HOST.
func (f *fakeEngine) listenUnix() string {
	sock := filepath.Join(f.t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		f.t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(f)
	srv.Listener = ln
	srv.Start()
	f.t.Cleanup(srv.Close)
	return "unix://" + sock
}

func (f *fakeEngine) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

// kill ends the exec id with 137, as a SIGKILL would.
func (f *fakeEngine) kill(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.execs[id]; e != nil && e.running {
		close(e.killed)
	}
}

var versioned = regexp.MustCompile(`^/v[0-9]+\.[0-9]+(/.*)$`)

func fail(w http.ResponseWriter, status int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": fmt.Sprintf(format, args...)})
}

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	if r.URL.Path == "/_ping" {
		if f.version != "" {
			w.Header().Set("API-Version", f.version)
		}
		io.WriteString(w, "OK")
		return
	}
	m := versioned.FindStringSubmatch(r.URL.Path)
	if m == nil {
		fail(w, 400, "the fake engine wants a versioned path, got %s", r.URL.Path)
		return
	}
	parts := strings.Split(strings.TrimPrefix(m[1], "/"), "/")
	if len(parts) != 3 || parts[0] != "exec" {
		fail(w, 404, "page not found")
		return
	}
	f.mu.Lock()
	e := f.execs[parts[1]]
	f.mu.Unlock()
	if e == nil {
		fail(w, 404, "No such exec instance: %s", parts[1])
		return
	}
	switch {
	case r.Method == http.MethodGet && parts[2] == "json":
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"ID": parts[1], "Running": e.running, "ExitCode": e.exit, "Pid": 4242})
	case r.Method == http.MethodPost && parts[2] == "start":
		f.start(w, r, parts[1], e)
	default:
		fail(w, 404, "page not found")
	}
}

// frame is one multiplexed frame: the stream, three zero bytes, the
// payload's length big-endian, the payload.
func frame(stream byte, p string) string {
	var hdr [8]byte
	hdr[0] = stream
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(p)))
	return string(hdr[:]) + p
}

// start runs exec id on the hijacked connection, as dockerd does after
// answering 101.
func (f *fakeEngine) start(w http.ResponseWriter, r *http.Request, id string, e *fakeExec) {
	if r.Header.Get("Connection") != "Upgrade" || r.Header.Get("Upgrade") != "tcp" {
		fail(w, 400, "exec start without an upgrade")
		return
	}
	io.Copy(io.Discard, r.Body) // the start's JSON, before stdin
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		f.t.Error(err)
		return
	}
	f.mu.Lock()
	e.running = true
	f.mu.Unlock()
	io.WriteString(conn, "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.multiplexed-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
	// The first frames go out with the answer's header, as a fast
	// engine's do.
	io.WriteString(conn, frame(1, "out\n"))
	go func() {
		defer conn.Close()
		code := 3
		switch id {
		case "done":
			io.WriteString(conn, frame(2, "err\n"))
		case "cat":
			io.WriteString(conn, frame(2, "err\n"))
			echo(conn, bufio.NewReader(rw))
		case "deaf":
			go io.Copy(io.Discard, rw) // stdin, ignored
			<-e.killed
			code = 137
		}
		f.mu.Lock()
		e.running, e.exit = false, &code
		f.mu.Unlock()
	}()
}

// echo copies stdin to stdout frames until stdin ends.
func echo(w io.Writer, r io.Reader) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			io.WriteString(w, frame(1, string(buf[:n])))
		}
		if err != nil {
			return
		}
	}
}

// noEngine is a DOCKER_HOST where nothing listens.
func noEngine(t *testing.T) string {
	return "unix://" + filepath.Join(t.TempDir(), "docker.sock")
}

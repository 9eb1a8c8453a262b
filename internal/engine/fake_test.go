package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeEngine emulates what dockerd enforces of the calls harness makes:
// a version in every path but /_ping's (and a version the engine
// speaks), 404 with a JSON message for what it does not have, 409 for an
// exec in a stopped container, and exec start as a hijacked connection
// (101 after Connection: Upgrade, or 200 as older engines answer).
type fakeEngine struct {
	t *testing.T
	// version is what /_ping's API-Version says ("" to say nothing);
	// min is the oldest the engine takes.
	version, min string
	// prefix is a tcp:// host's base path.
	prefix string
	// answer200 makes exec start answer 200, not 101.
	answer200 bool

	mu         sync.Mutex
	paths      []string // METHOD /path?query of every request
	containers map[string]*fakeContainer
	execs      map[string]*fakeExec
	images     map[string]bool
	bodies     map[string][]byte // the last body per route (create, build, import)
	headers    map[string]http.Header
	n          int
}

type fakeContainer struct {
	cfg     ContainerConfig
	running bool
}

type fakeExec struct {
	container string
	cfg       ExecConfig
	running   bool
	exit      *int
}

func newFakeEngine(t *testing.T) *fakeEngine {
	return &fakeEngine{t: t, version: "1.41", min: "1.12",
		containers: map[string]*fakeContainer{}, execs: map[string]*fakeExec{}, images: map[string]bool{"base:1": true},
		bodies: map[string][]byte{}, headers: map[string]http.Header{}}
}

// listenUnix serves f on a unix socket and returns its DOCKER_HOST.
func (f *fakeEngine) listenUnix() string {
	dir, err := os.MkdirTemp("", "engine")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "docker.sock")
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

// client is a client of f over a unix socket.
func (f *fakeEngine) client() *Client {
	c, err := New(f.listenUnix())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

func (f *fakeEngine) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

var versioned = regexp.MustCompile(`^/v([0-9]+\.[0-9]+)(/.*)$`)

func fail(w http.ResponseWriter, status int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": fmt.Sprintf(format, args...)})
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()
	p, ok := strings.CutPrefix(r.URL.Path, f.prefix)
	if !ok {
		fail(w, 404, "page not found")
		return
	}
	if p == "/_ping" {
		if f.version != "" {
			w.Header().Set("API-Version", f.version)
		}
		w.Header().Set("OSType", "linux")
		io.WriteString(w, "OK")
		return
	}
	m := versioned.FindStringSubmatch(p)
	if m == nil {
		fail(w, 400, "harness's fake engine wants a versioned path, got %s", p)
		return
	}
	v, route := m[1], m[2]
	if f.version != "" && versionLess(f.version, v) {
		fail(w, 400, "client version %s is too new. Maximum supported API version is %s", v, f.version)
		return
	}
	if versionLess(v, f.min) {
		fail(w, 400, "client version %s is too old. Minimum supported API version is %s", v, f.min)
		return
	}
	f.route(w, r, route)
}

func (f *fakeEngine) route(w http.ResponseWriter, r *http.Request, route string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := strings.Split(strings.TrimPrefix(route, "/"), "/")
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == "GET" && route == "/version":
		answer(w, 200, map[string]any{"Version": "20.10.24", "ApiVersion": f.version, "MinAPIVersion": f.min,
			"Components": []map[string]string{{"Name": "Engine", "Version": "20.10.24"}}})
	case r.Method == "POST" && route == "/containers/create":
		f.bodies["create"] = body
		var cfg ContainerConfig
		if err := json.Unmarshal(body, &cfg); err != nil {
			fail(w, 400, "bad body: %v", err)
			return
		}
		if !f.images[cfg.Image] {
			fail(w, 404, "No such image: %s", cfg.Image)
			return
		}
		f.n++
		id := fmt.Sprintf("c%d", f.n)
		f.containers[id] = &fakeContainer{cfg: cfg}
		answer(w, 201, map[string]any{"Id": id, "Warnings": []string{}})
	case parts[0] == "containers" && len(parts) >= 2:
		c := f.containers[parts[1]]
		if c == nil {
			fail(w, 404, "No such container: %s", parts[1])
			return
		}
		switch {
		case r.Method == "POST" && len(parts) == 3 && parts[2] == "start":
			c.running = true
			w.WriteHeader(204)
		case r.Method == "POST" && len(parts) == 3 && parts[2] == "stop":
			c.running = false
			w.WriteHeader(204)
		case r.Method == "GET" && len(parts) == 3 && parts[2] == "json":
			status := "created"
			if c.running {
				status = "running"
			}
			answer(w, 200, map[string]any{"Id": parts[1], "State": map[string]any{"Status": status, "Running": c.running, "ExitCode": 0}, "HostConfig": c.cfg.HostConfig})
		case r.Method == "DELETE" && len(parts) == 2:
			if c.running && r.URL.Query().Get("force") != "1" {
				fail(w, 409, "You cannot remove a running container %s. Stop the container before attempting removal or force remove", parts[1])
				return
			}
			delete(f.containers, parts[1])
			w.WriteHeader(204)
		case r.Method == "POST" && len(parts) == 3 && parts[2] == "exec":
			if !c.running {
				fail(w, 409, "Container %s is not running", parts[1])
				return
			}
			var cfg ExecConfig
			json.Unmarshal(body, &cfg)
			f.n++
			id := fmt.Sprintf("e%d", f.n)
			f.execs[id] = &fakeExec{container: parts[1], cfg: cfg}
			answer(w, 201, map[string]string{"Id": id})
		case r.Method == "GET" && len(parts) == 3 && parts[2] == "logs":
			w.Header().Set("Content-Type", "application/vnd.docker.multiplexed-stream")
			io.WriteString(w, frame(1, "log out\n")+frame(2, "log err\n"))
		default:
			fail(w, 404, "page not found")
		}
	case parts[0] == "exec" && len(parts) == 3:
		e := f.execs[parts[1]]
		if e == nil {
			fail(w, 404, "No such exec instance: %s", parts[1])
			return
		}
		switch {
		case r.Method == "GET" && parts[2] == "json":
			answer(w, 200, map[string]any{"ID": parts[1], "Running": e.running, "ExitCode": e.exit, "Pid": 4242})
		case r.Method == "POST" && parts[2] == "start":
			f.start(w, r, e)
		default:
			fail(w, 404, "page not found")
		}
	case r.Method == "GET" && parts[0] == "images" && len(parts) >= 3 && parts[len(parts)-1] == "json":
		name := strings.Join(parts[1:len(parts)-1], "/")
		if !f.images[name] {
			fail(w, 404, "No such image: %s", name)
			return
		}
		answer(w, 200, map[string]string{"Id": "sha256:" + name})
	case r.Method == "POST" && route == "/build":
		f.bodies["build"], f.headers["build"] = body, r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"stream":"Step 1/2 : FROM base:1\n"}`+"\n"+`{"stream":"Step 2/2 : RUN false\n"}`+"\n")
		if strings.Contains(r.URL.Query().Get("t"), "fail") {
			io.WriteString(w, `{"errorDetail":{"code":1,"message":"The command '/bin/sh -c false' returned a non-zero code: 1"},"error":"The command '/bin/sh -c false' returned a non-zero code: 1"}`+"\n")
			return
		}
		f.images[r.URL.Query().Get("t")] = true
		io.WriteString(w, `{"stream":"Successfully built 0123\n"}`+"\n")
	case r.Method == "POST" && route == "/images/create":
		f.bodies["import"], f.headers["import"] = body, r.Header.Clone()
		if r.URL.Query().Get("fromSrc") != "-" {
			fail(w, 400, "only imports here")
			return
		}
		f.images[r.URL.Query().Get("repo")] = true
		answer(w, 200, map[string]string{"status": "sha256:0123"})
	default:
		fail(w, 404, "page not found")
	}
}

// start runs exec e as the engine would, on the hijacked connection: it
// writes "out\n" to stdout and "err\n" to stderr, then copies stdin to
// stdout until it ends (when attached), then exits 3.
func (f *fakeEngine) start(w http.ResponseWriter, r *http.Request, e *fakeExec) {
	upgrade := r.Header.Get("Connection") == "Upgrade" && r.Header.Get("Upgrade") == "tcp"
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		f.t.Error(err)
		return
	}
	e.running = true
	if upgrade && !f.answer200 {
		io.WriteString(conn, "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
	} else {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n")
	}
	// The first frames go out with the answer's header, as a fast
	// engine's do, so the client must keep what it read past it.
	io.WriteString(conn, frame(1, "out\n")+frame(2, "err\n"))
	go func() {
		defer conn.Close()
		if e.cfg.AttachStdin {
			br := bufio.NewReader(rw)
			buf := make([]byte, 4096)
			for {
				n, err := br.Read(buf)
				if n > 0 {
					io.WriteString(conn, frame(1, string(buf[:n])))
				}
				if err != nil {
					break
				}
			}
		}
		f.mu.Lock()
		code := 3
		e.running, e.exit = false, &code
		f.mu.Unlock()
	}()
}

package llmtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// Interaction is one recorded HTTP exchange of a go-vcr v2 cassette.
type Interaction struct {
	Method      string
	URL         string
	RequestBody string

	Status int
	Header http.Header
	Body   string
}

type cassetteFile struct {
	Version      int `yaml:"version"`
	Interactions []struct {
		Request struct {
			Body   string `yaml:"body"`
			URL    string `yaml:"url"`
			Method string `yaml:"method"`
		} `yaml:"request"`
		Response struct {
			Body    string              `yaml:"body"`
			Headers map[string][]string `yaml:"headers"`
			Code    int                 `yaml:"code"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

// LoadCassette reads a go-vcr v2 YAML cassette.
func LoadCassette(path string) ([]Interaction, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c cassetteFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", path, err)
	}
	if c.Version != 2 {
		return nil, fmt.Errorf("cassette %s: version %d, want 2", path, c.Version)
	}
	var out []Interaction
	for _, i := range c.Interactions {
		h := http.Header{}
		for k, vs := range i.Response.Headers {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
		out = append(out, Interaction{
			Method: i.Request.Method, URL: i.Request.URL, RequestBody: i.Request.Body,
			Status: i.Response.Code, Header: h, Body: i.Response.Body,
		})
	}
	return out, nil
}

// Path is the request path of the interaction's URL.
func (i Interaction) Path() string {
	u, err := url.Parse(i.URL)
	if err != nil {
		return ""
	}
	return u.Path
}

// ServeCassette serves the interactions' responses in order, one per
// request, on loopback, checking that each request's method and path match
// the recording (bodies are the recorder's, not ours, so they are not
// compared). It fails t on a mismatch or an extra request.
func ServeCassette(t testing.TB, in []Interaction) *httptest.Server {
	var mu sync.Mutex
	next := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		n := next
		next++
		mu.Unlock()
		if n >= len(in) {
			t.Errorf("cassette: unexpected request %d %s %s", n, r.Method, r.URL.Path)
			http.Error(w, "cassette exhausted", http.StatusInternalServerError)
			return
		}
		i := in[n]
		if r.Method != i.Method || !strings.HasSuffix(r.URL.Path, strings.TrimPrefix(i.Path(), "/v1")) {
			t.Errorf("cassette: request %d is %s %s, recorded %s %s", n, r.Method, r.URL.Path, i.Method, i.Path())
		}
		for k, vs := range i.Header {
			w.Header()[k] = vs
		}
		status := i.Status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		io.WriteString(w, i.Body)
	}))
	t.Cleanup(hs.Close)
	return hs
}

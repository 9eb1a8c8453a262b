package batch

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// KubeAPIServerEnv names a kube-apiserver binary; with it (and Debian's
// etcd in PATH) TestKubeManifestsServerSideDryRun runs a real API server
// on loopback. CI does not build one (it takes longer than the rest of
// CI); see docs/batch.md for how.
const KubeAPIServerEnv = "HARNESS_TEST_KUBE_APISERVER"

// TestKubeManifestsServerSideDryRun sends the emitted ConfigMap and Job,
// and a Secret of the form docs/batch.md has people create, to a real API
// server as a server-side dry run with strict field validation: the
// server's own schemas, defaulting and validation decide, and nothing is
// stored. A Job with an unknown field and one with an invalid value must
// be refused, so the checks are shown to be live.
func TestKubeManifestsServerSideDryRun(t *testing.T) {
	apiserver := os.Getenv(KubeAPIServerEnv)
	if apiserver == "" {
		t.Skipf("%s is not set: no kube-apiserver to validate against", KubeAPIServerEnv)
	}
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not installed (apt-get install etcd-server)")
	}
	dir := t.TempDir()
	base := startAPIServer(t, dir, apiserver, etcd)
	hc := apiClient(t, dir)

	file := []byte(`{"id":"a","repo":"https://git.example.com/a.git","prompt":"p","timeout":"10m","check":"go test ./..."}
{"id":"b","repo":"git@example.com:b.git","ref":"main","prompt":"q","budget_usd":0.5}
`)
	tasks, err := ReadTasks(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	y, err := KubeJob{Name: "nightly", Namespace: "default", Image: "tasks:go", Jobs: 2, RunArgs: []string{"--yolo"}, Memory: "2Gi", CPU: "1"}.Manifests(tasks, file)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := yaml.Marshal(corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "harness-model", Namespace: "default"},
		StringData: map[string]string{"MODEL": "fake-model", "ANTHROPIC_API_KEY": "not-a-key"},
	})
	if err != nil {
		t.Fatal(err)
	}
	docs := append(splitDocs(y), string(secret))
	kinds := map[string]string{"ConfigMap": "/api/v1/namespaces/default/configmaps", "Job": "/apis/batch/v1/namespaces/default/jobs", "Secret": "/api/v1/namespaces/default/secrets"}
	var job map[string]any
	for _, d := range docs {
		j, err := yaml.YAMLToJSON([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		json.Unmarshal(j, &obj)
		kind, _ := obj["kind"].(string)
		if kind == "Job" {
			job = obj
		}
		code, body := post(t, hc, base+kinds[kind], j)
		if code != http.StatusCreated {
			t.Errorf("%s: the API server refused it (%d): %s", kind, code, body)
			continue
		}
		t.Logf("%s: accepted by a server-side dry run (%d)", kind, code)
	}
	if job == nil {
		t.Fatal("no Job among the manifests")
	}
	// The same Job with a misspelt field, then with an invalid value.
	spec := job["spec"].(map[string]any)
	spec["paralelism"] = 2
	j, _ := json.Marshal(job)
	if code, body := post(t, hc, base+kinds["Job"], j); code != http.StatusBadRequest || !strings.Contains(body, "paralelism") {
		t.Errorf("a Job with an unknown field: %d %s, want 400 naming it", code, body)
	}
	delete(spec, "paralelism")
	spec["completions"] = -1
	j, _ = json.Marshal(job)
	if code, body := post(t, hc, base+kinds["Job"], j); code != http.StatusUnprocessableEntity {
		t.Errorf("a Job with completions -1: %d %s, want 422", code, body)
	}
}

func post(t *testing.T, hc *http.Client, url string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"?dryRun=All&fieldValidation=Strict", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const apiToken = "harness-test-token"

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startAPIServer starts etcd and kube-apiserver on loopback, in dir, and
// returns the server's base URL once it is ready.
func startAPIServer(t *testing.T, dir, apiserver, etcd string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ep, pp, sp := freePort(t), freePort(t), freePort(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ep)
	logs := &lockedBuffer{}
	exited := make(chan string, 2)
	start := func(name string, args ...string) {
		c := exec.CommandContext(ctx, name, args...)
		c.Stdout, c.Stderr = logs, logs
		c.WaitDelay = 5 * time.Second
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			err := c.Wait()
			exited <- fmt.Sprintf("%s exited: %v", filepath.Base(name), err)
			close(done)
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	start(etcd, "--data-dir", filepath.Join(dir, "etcd"), "--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", pp), "--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", pp),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", pp))
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
	os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(apiToken+",admin,1,system:masters\n"), 0o600)
	start(apiserver, "--etcd-servers", etcdURL, "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(sp), "--cert-dir", filepath.Join(dir, "certs"),
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", filepath.Join(dir, "sa.pub"), "--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"), "--authorization-mode", "AlwaysAllow",
		"--service-cluster-ip-range", "10.96.0.0/24",
		// The endpoint reconciler refuses a loopback advertise address
		// ("may not be in the loopback range"); nothing here needs the
		// kubernetes Service's endpoints.
		"--endpoint-reconciler-type", "none",
		// Debian's etcd is 3.4: without the progress notifications of
		// 3.5 the watch cache never catches up ("Too large resource
		// version"); read from etcd itself.
		"--watch-cache=false")
	base := fmt.Sprintf("https://127.0.0.1:%d", sp)
	deadline := time.Now().Add(3 * time.Minute)
	var last error // why the last probe failed, for the timeout's message
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the API server did not become ready (last probe: %v):\n%s", last, lastOf(logs.String()))
		}
		select {
		case why := <-exited:
			t.Fatalf("%s before the API server was ready:\n%s", why, lastOf(logs.String()))
		case <-time.After(500 * time.Millisecond):
		}
		if _, err := os.Stat(filepath.Join(dir, "certs", "apiserver.crt")); err != nil {
			continue
		}
		req, _ := http.NewRequest("GET", base+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+apiToken)
		resp, err := apiClient(t, dir).Do(req)
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		// The default namespace exists once the bootstrap controllers ran.
		req, _ = http.NewRequest("GET", base+"/api/v1/namespaces/default", nil)
		req.Header.Set("Authorization", "Bearer "+apiToken)
		if r2, err := apiClient(t, dir).Do(req); err == nil {
			r2.Body.Close()
			if resp.StatusCode == 200 && r2.StatusCode == 200 {
				return base
			}
			last = fmt.Errorf("readyz %d, the default namespace %d", resp.StatusCode, r2.StatusCode)
		} else {
			last = err
		}
	}
}

// apiClient trusts the API server's self-signed serving certificate.
func apiClient(t *testing.T, dir string) *http.Client {
	pool := x509.NewCertPool()
	if b, err := os.ReadFile(filepath.Join(dir, "certs", "apiserver.crt")); err == nil {
		pool.AppendCertsFromPEM(b)
	}
	// The certificate names 127.0.0.1 (an IP SAN), not localhost.
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// lockedBuffer collects two processes' output, written from os/exec's
// copying goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func lastOf(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}

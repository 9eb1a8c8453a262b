package batch

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestKubeManifests decodes the emitted manifests strictly into the
// official API types (an unknown or misspelt field fails) and checks what
// the batch relies on, with no server; TestKubeManifestsServerSideDryRun
// has a real API server validate them where one is given.
func TestKubeManifests(t *testing.T) {
	file := []byte(`{"id":"a","repo":"https://git.example.com/a.git","prompt":"p","timeout":"10m"}
{"id":"b","repo":"git@example.com:b.git","prompt":"q"}
`)
	tasks, err := ReadTasks(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	y, err := KubeJob{Name: "nightly", Image: "tasks:go", Jobs: 3, RunArgs: []string{"--yolo"}, Memory: "2Gi"}.Manifests(tasks, file)
	if err != nil {
		t.Fatal(err)
	}
	docs := splitDocs(y)
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a ConfigMap and a Job:\n%s", len(docs), y)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &cm); err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatalf("Job: %v", err)
	}
	if cm.Kind != "ConfigMap" || cm.Name != "nightly" || cm.Data["tasks.jsonl"] != string(file) {
		t.Errorf("ConfigMap %+v", cm)
	}
	s := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 2 || *s.Parallelism != 3 {
		t.Errorf("Job spec: kind %s, mode %v, completions %d, parallelism %d", job.Kind, *s.CompletionMode, *s.Completions, *s.Parallelism)
	}
	pod := s.Template.Spec
	c := pod.Containers[0]
	if c.Image != "tasks:go" || !slices.Contains(c.Args, "$(JOB_COMPLETION_INDEX)") || !slices.Contains(c.Args, "--yolo") || c.Args[len(c.Args)-1] != "/tasks/tasks.jsonl" {
		t.Errorf("container %s %v", c.Image, c.Args)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever || *pod.AutomountServiceAccountToken || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("pod security: %+v", pod)
	}
	if sc := c.SecurityContext; *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container security: %+v", sc)
	}
	if c.EnvFrom[0].SecretRef.Name != "harness-model" {
		t.Errorf("settings from %+v", c.EnvFrom)
	}
	if q := c.Resources.Limits[corev1.ResourceMemory]; q.String() != "2Gi" {
		t.Errorf("memory limit %s", q.String())
	}

	// A repository that is a path on this machine cannot be cloned by a pod.
	local := []Task{{ID: "x", Repo: "../repo", Prompt: "p"}}
	if _, err := (KubeJob{Image: "i"}).Manifests(local, nil); err == nil || !strings.Contains(err.Error(), "path on this machine") {
		t.Errorf("a local path was accepted: %v", err)
	}
	if _, err := (KubeJob{}).Manifests(tasks, file); err == nil {
		t.Error("no image was accepted")
	}
}

// TestKubeQuantities: limits are checked against the Kubernetes quantity
// grammar here, before kubectl sees them.
func TestKubeQuantities(t *testing.T) {
	tasks := []Task{{ID: "a", Repo: "https://git.example.com/a.git", Prompt: "p"}}
	for _, c := range []struct {
		mem, cpu string
		ok       bool
	}{
		{"4Gi", "2", true}, {"512Mi", "500m", true}, {"1e9", "0.5", true}, {"1.5G", ".5", true},
		{"4GB", "", false}, {"", "two", false}, {"Gi", "", false}, {"", "1.2.3", false},
	} {
		_, err := KubeJob{Image: "x", Memory: c.mem, CPU: c.cpu}.Manifests(tasks, nil)
		if (err == nil) != c.ok {
			t.Errorf("memory %q cpu %q: err %v, want ok=%v", c.mem, c.cpu, err, c.ok)
		}
	}
}

// splitDocs splits a YAML stream at its "---" lines, as kubectl does: each
// document keeps its last line break (a literal block at a document's end
// would otherwise lose its own).
func splitDocs(y []byte) []string {
	return regexp.MustCompile(`(?m)^---\n`).Split(string(y), -1)
}

// TestKubeYAMLQuoting: every string comes back as the same string through
// sigs.k8s.io/yaml, which reads YAML 1.1 as kubectl and the API server do
// (yes, on, y and n are booleans there; 0o10, 1e3 and 1:20 are numbers).
func TestKubeYAMLQuoting(t *testing.T) {
	values := []string{"yes", "Yes", "on", "OFF", "y", "n", "no", "true", "null", "~", "", "0o10", "010", "1e3", "1:20",
		".inf", "-", "- x", "a: b", "#c", "&a", "*a", "!t", "%d", "@x", "`x", "'q'", `"q"`, " lead", "trail ", "tab\there",
		"two\nlines\n", "no final break\nhere", "  indented\nfirst\n", "tasks:go", "$(JOB_COMPLETION_INDEX)", "2Gi",
		"RuntimeDefault", "app.kubernetes.io/name", "<&>", "ünï", "x\r\ny"}
	in := map[string]any{"values": values}
	for _, v := range values {
		in["k-"+v] = v
	}
	y, err := kubeYAML(in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(y, &out); err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	for i, v := range out["values"].([]any) {
		if v != values[i] {
			t.Errorf("%q came back as %#v", values[i], v)
		}
	}
	for _, v := range values {
		if out["k-"+v] != v {
			t.Errorf("value of key %q came back as %#v", "k-"+v, out["k-"+v])
		}
	}
}

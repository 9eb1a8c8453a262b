package batch

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// KubeJob describes the Kubernetes form of a batch: an Indexed Job with one
// completion index per task, each pod running `harness batch --index I`
// on the task file mounted from a ConfigMap, the model settings from a
// Secret, and its one result line on standard output, where `harness batch
// collect` picks it up from the pods' logs.
type KubeJob struct {
	Name      string   // the Job's and the ConfigMap's name
	Namespace string   // empty: the namespace kubectl uses
	Image     string   // has harness on PATH, sh, git and the toolchain
	Secret    string   // a Secret of model settings (keys as in ~/.agents/env)
	Jobs      int      // pods at once (parallelism)
	RunArgs   []string // harness run flags for every task (--yolo, --allow …)
	Memory    string   // limit per pod, e.g. "4Gi"
	CPU       string   // limit per pod, e.g. "2"
}

// Manifests returns the ConfigMap and the Job as one YAML stream. Tasks
// must name repositories a pod can clone (URLs, not paths of this machine).
func (k KubeJob) Manifests(tasks []Task, taskFile []byte) ([]byte, error) {
	if err := k.check(tasks); err != nil {
		return nil, err
	}
	limits, err := k.limits()
	if err != nil {
		return nil, err
	}
	name := k.Name
	if name == "" {
		name = "harness-batch"
	}
	meta := kMeta{Name: name, Namespace: k.Namespace, Labels: map[string]string{"app.kubernetes.io/name": "harness-batch", "app.kubernetes.io/instance": name}}
	cm := &kConfigMap{
		kType:    kType{APIVersion: "v1", Kind: "ConfigMap"},
		Metadata: meta,
		Data:     map[string]string{"tasks.jsonl": string(taskFile)},
	}
	n := len(tasks)
	par := max(k.Jobs, 1)
	indexed := "Indexed"
	perIndex := 1 // a pod lost to its node gets one more try; a task that failed does not
	deadline := int64(0)
	for _, t := range tasks {
		deadline = max(deadline, int64(time.Duration(timeOr(t.Timeout)).Seconds())*2+600)
	}
	job := &kJob{
		kType:    kType{APIVersion: "batch/v1", Kind: "Job"},
		Metadata: meta,
		Spec: kJobSpec{
			CompletionMode:        &indexed,
			Completions:           &n,
			Parallelism:           &par,
			BackoffLimitPerIndex:  &perIndex,
			ActiveDeadlineSeconds: &deadline,
			Template: kPodTemplate{
				Metadata: kMeta{Labels: meta.Labels},
				Spec:     k.podSpec(name, limits),
			},
		},
	}
	var out bytes.Buffer
	for i, obj := range []any{cm, job} {
		b, err := kubeYAML(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}

// check refuses what a pod could not run: no image, or a task whose repo
// is a path on this machine.
func (k KubeJob) check(tasks []Task) error {
	if k.Image == "" {
		return errors.New("kubernetes: an image is needed (--image or HARNESS_IMAGE)")
	}
	for _, t := range tasks {
		if !strings.Contains(t.Repo, "://") && !strings.Contains(t.Repo, "@") {
			return fmt.Errorf("kubernetes: task %s: repo %q is a path on this machine; a pod can clone only URLs", t.ID, t.Repo)
		}
	}
	return nil
}

// limits are the pod's resource limits, each a Kubernetes quantity.
func (k KubeJob) limits() (map[string]string, error) {
	limits := map[string]string{}
	if k.Memory != "" {
		if !isQuantity(k.Memory) {
			return nil, fmt.Errorf("kubernetes: memory %q: %w", k.Memory, errQuantity)
		}
		limits["memory"] = k.Memory
	}
	if k.CPU != "" {
		if !isQuantity(k.CPU) {
			return nil, fmt.Errorf("kubernetes: cpu %q: %w", k.CPU, errQuantity)
		}
		limits["cpu"] = k.CPU
	}
	return limits, nil
}

// podSpec is one task's pod: harness batch --index on the mounted task
// file, as a non-root user with no privileges, a read-only root and
// scratch volumes for the work tree, home and /tmp.
func (k KubeJob) podSpec(name string, limits map[string]string) kPodSpec {
	no, yes := false, true
	uid := int64(65532)
	args := []string{"batch", "--index", "$(JOB_COMPLETION_INDEX)", "--out", "-", "--workdir", "/work"}
	args = append(args, k.RunArgs...)
	args = append(args, "/tasks/tasks.jsonl")
	secret := k.Secret
	if secret == "" {
		secret = "harness-model"
	}
	emptyDir := func(name string) kVolume {
		return kVolume{Name: name, EmptyDir: &struct{}{}}
	}
	return kPodSpec{
		RestartPolicy:                "Never",
		AutomountServiceAccountToken: &no,
		EnableServiceLinks:           &no,
		SecurityContext: &kPodSecurity{
			RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &uid, FSGroup: &uid,
			SeccompProfile: &kSeccomp{Type: "RuntimeDefault"},
		},
		Containers: []kContainer{{
			Name:    "task",
			Image:   k.Image,
			Command: []string{"harness"},
			Args:    args,
			Env:     []kEnvVar{{Name: "HOME", Value: "/home/harness"}},
			EnvFrom: []kEnvFrom{{SecretRef: &kName{Name: secret}}},
			SecurityContext: &kSecurity{
				AllowPrivilegeEscalation: &no,
				ReadOnlyRootFilesystem:   &yes,
				Capabilities:             &kCapabilities{Drop: []string{"ALL"}},
			},
			Resources: kResources{Limits: limits},
			VolumeMounts: []kVolumeMount{
				{Name: "tasks", MountPath: "/tasks", ReadOnly: true},
				{Name: "work", MountPath: "/work"},
				{Name: "home", MountPath: "/home/harness"},
				{Name: "tmp", MountPath: "/tmp"},
			},
		}},
		Volumes: []kVolume{
			{Name: "tasks", ConfigMap: &kName{Name: name}},
			emptyDir("work"), emptyDir("home"), emptyDir("tmp"),
		},
	}
}

func timeOr(d Duration) Duration {
	if d == 0 {
		return Duration(30 * time.Minute)
	}
	return d
}

// ParseIndex reads a completion index as Kubernetes passes it.
func ParseIndex(s string, n int) (int, error) {
	i, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || i < 0 || i >= n {
		return 0, fmt.Errorf("index %q: want 0 to %d", s, n-1)
	}
	return i, nil
}

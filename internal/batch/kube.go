package batch

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
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
	if k.Image == "" {
		return nil, errors.New("kubernetes: an image is needed (--image or HARNESS_IMAGE)")
	}
	for _, t := range tasks {
		if !strings.Contains(t.Repo, "://") && !strings.Contains(t.Repo, "@") {
			return nil, fmt.Errorf("kubernetes: task %s: repo %q is a path on this machine; a pod can clone only URLs", t.ID, t.Repo)
		}
	}
	name := k.Name
	if name == "" {
		name = "harness-batch"
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: map[string]string{"app.kubernetes.io/name": "harness-batch", "app.kubernetes.io/instance": name}}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta,
		Data:       map[string]string{"tasks.jsonl": string(taskFile)},
	}
	n := int32(len(tasks))
	par := int32(max(k.Jobs, 1))
	indexed := batchv1.IndexedCompletion
	perIndex := int32(1) // a pod lost to its node gets one more try; a task that failed does not
	deadline := int64(0)
	for _, t := range tasks {
		deadline = max(deadline, int64(time.Duration(timeOr(t.Timeout)).Seconds())*2+600)
	}
	no, yes := false, true
	uid := int64(65532)
	args := []string{"batch", "--index", "$(JOB_COMPLETION_INDEX)", "--out", "-", "--workdir", "/work"}
	args = append(args, k.RunArgs...)
	args = append(args, "/tasks/tasks.jsonl")
	limits := corev1.ResourceList{}
	if k.Memory != "" {
		q, err := resource.ParseQuantity(k.Memory)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: memory %q: %w", k.Memory, err)
		}
		limits[corev1.ResourceMemory] = q
	}
	if k.CPU != "" {
		q, err := resource.ParseQuantity(k.CPU)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: cpu %q: %w", k.CPU, err)
		}
		limits[corev1.ResourceCPU] = q
	}
	secret := k.Secret
	if secret == "" {
		secret = "harness-model"
	}
	emptyDir := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			CompletionMode:        &indexed,
			Completions:           &n,
			Parallelism:           &par,
			BackoffLimitPerIndex:  &perIndex,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: &no,
					EnableServiceLinks:           &no,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &uid, FSGroup: &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    "task",
						Image:   k.Image,
						Command: []string{"harness"},
						Args:    args,
						Env:     []corev1.EnvVar{{Name: "HOME", Value: "/home/harness"}},
						EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}}},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: &no,
							ReadOnlyRootFilesystem:   &yes,
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						Resources: corev1.ResourceRequirements{Limits: limits},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "tasks", MountPath: "/tasks", ReadOnly: true},
							{Name: "work", MountPath: "/work"},
							{Name: "home", MountPath: "/home/harness"},
							{Name: "tmp", MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "tasks", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
						emptyDir("work"), emptyDir("home"), emptyDir("tmp"),
					},
				},
			},
		},
	}
	var out bytes.Buffer
	for i, obj := range []any{cm, job} {
		b, err := yaml.Marshal(obj)
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

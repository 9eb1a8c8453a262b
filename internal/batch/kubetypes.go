package batch

import (
	"errors"
	"regexp"
	"sync"
)

// The few Kubernetes objects Manifests writes, as local structs with the
// API's field names: k8s.io/api and apimachinery (about 45 packages whose
// init ran in every harness process, sandbox helpers included) were linked
// for two YAML documents. The test decodes the output strictly into the
// real types, and a server-side dry run checks it where a kube-apiserver is
// at hand (kube_apiserver_test.go).

type kType struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type kMeta struct {
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type kConfigMap struct {
	kType    `json:",inline"`
	Metadata kMeta             `json:"metadata"`
	Data     map[string]string `json:"data,omitempty"`
}

type kJob struct {
	kType    `json:",inline"`
	Metadata kMeta    `json:"metadata"`
	Spec     kJobSpec `json:"spec"`
}

type kJobSpec struct {
	CompletionMode        *string      `json:"completionMode,omitempty"`
	Completions           *int         `json:"completions,omitempty"`
	Parallelism           *int         `json:"parallelism,omitempty"`
	BackoffLimitPerIndex  *int         `json:"backoffLimitPerIndex,omitempty"`
	ActiveDeadlineSeconds *int64       `json:"activeDeadlineSeconds,omitempty"`
	Template              kPodTemplate `json:"template"`
}

type kPodTemplate struct {
	Metadata kMeta    `json:"metadata"`
	Spec     kPodSpec `json:"spec"`
}

type kPodSpec struct {
	RestartPolicy                string        `json:"restartPolicy,omitempty"`
	AutomountServiceAccountToken *bool         `json:"automountServiceAccountToken,omitempty"`
	EnableServiceLinks           *bool         `json:"enableServiceLinks,omitempty"`
	SecurityContext              *kPodSecurity `json:"securityContext,omitempty"`
	Containers                   []kContainer  `json:"containers"`
	Volumes                      []kVolume     `json:"volumes,omitempty"`
}

type kPodSecurity struct {
	RunAsNonRoot   *bool     `json:"runAsNonRoot,omitempty"`
	RunAsUser      *int64    `json:"runAsUser,omitempty"`
	RunAsGroup     *int64    `json:"runAsGroup,omitempty"`
	FSGroup        *int64    `json:"fsGroup,omitempty"`
	SeccompProfile *kSeccomp `json:"seccompProfile,omitempty"`
}

type kSeccomp struct {
	Type string `json:"type"`
}

type kContainer struct {
	Name            string         `json:"name"`
	Image           string         `json:"image,omitempty"`
	Command         []string       `json:"command,omitempty"`
	Args            []string       `json:"args,omitempty"`
	Env             []kEnvVar      `json:"env,omitempty"`
	EnvFrom         []kEnvFrom     `json:"envFrom,omitempty"`
	SecurityContext *kSecurity     `json:"securityContext,omitempty"`
	Resources       kResources     `json:"resources"`
	VolumeMounts    []kVolumeMount `json:"volumeMounts,omitempty"`
}

type kEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

type kEnvFrom struct {
	SecretRef *kName `json:"secretRef,omitempty"`
}

type kName struct {
	Name string `json:"name"`
}

type kSecurity struct {
	AllowPrivilegeEscalation *bool          `json:"allowPrivilegeEscalation,omitempty"`
	ReadOnlyRootFilesystem   *bool          `json:"readOnlyRootFilesystem,omitempty"`
	Capabilities             *kCapabilities `json:"capabilities,omitempty"`
}

type kCapabilities struct {
	Drop []string `json:"drop,omitempty"`
}

type kResources struct {
	Limits map[string]string `json:"limits,omitempty"`
}

type kVolumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

type kVolume struct {
	Name      string    `json:"name"`
	EmptyDir  *struct{} `json:"emptyDir,omitempty"`
	ConfigMap *kName    `json:"configMap,omitempty"`
}

// quantity is the grammar of a Kubernetes resource quantity (a signed
// decimal, then a binary or decimal SI suffix or an exponent), as
// apimachinery's resource.ParseQuantity documents it.
// Compiled on first use: a regexp compiled at init costs every process.
var quantity = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$`)
})

var errQuantity = errors.New("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")

func isQuantity(s string) bool { return quantity().MatchString(s) }

package batch

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sync"

	"gopkg.in/yaml.v3"
)

// kubeYAML writes v as one YAML document through its JSON form, so the
// struct's json tags name the fields and decide omitempty, in their
// declared order. The quoting is safe for YAML 1.1 readers, which is how
// kubectl and the API server read manifests (sigs.k8s.io/yaml over go-yaml
// v2, where yes, on and y are booleans): a string is plain only when it is
// a name (a letter first, then letters, digits, '.', '_', '/', '-') and
// not one of 1.1's special words; a string of several lines is a literal
// block; anything else is double-quoted. (sigs.k8s.io/yaml itself would
// link a second YAML library into every harness process for this.)
func kubeYAML(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(j, &doc); err != nil {
		return nil, err
	}
	restyle(&doc)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// restyle turns the flow style the JSON was parsed with into block style
// and quotes strings as kubeYAML says.
func restyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		switch {
		case plainName().MatchString(n.Value) && !yaml11Special[n.Value]:
		case bytes.ContainsRune([]byte(n.Value), '\n'):
			n.Style = yaml.LiteralStyle
		default:
			n.Style = yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		restyle(c)
	}
}

var plainName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._/-]*$`) })

// yaml11Special are the plain words YAML 1.1 reads as booleans or null.
var yaml11Special = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
	"null": true, "Null": true, "NULL": true,
}

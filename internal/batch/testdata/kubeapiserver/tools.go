//go:build tools

package kubeapiserver

import _ "k8s.io/kubernetes/cmd/kube-apiserver"

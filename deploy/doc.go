// Package deploy holds the container image and Kubernetes manifests of the
// cms binary; its only Go code is manifests_test.go, which renders every
// kustomize overlay and decodes the result strictly.
package deploy

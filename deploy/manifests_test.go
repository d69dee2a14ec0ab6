package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// appConfigFile is the source of truth for targets and config keys.
const appConfigFile = "../services/internal/app/config.go"

// componentURLEnv are the shared component URLs the binary reads
// (services/cms/config.go componentURLEnv) besides CMS_<KEY>.
var componentURLEnv = []string{"CMS_POSTGRES_URL", "CMS_NATS_URL", "CMS_ELASTICSEARCH_URL", "CMS_REDIS_URL"}

// kustomizations are every directory `kubectl apply -k` may be pointed at.
var kustomizations = []string{"k8s/base", "k8s/overlays/embedded", "k8s/overlays/distributed", "k8s/examples/managed-components"}

// render builds one kustomization in-process, as `kustomize build dir` would.
func render(t *testing.T, dir string) []byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatalf("kustomize build %s: yaml: %v", dir, err)
	}
	return out
}

// decodeAll splits a multi-document stream and decodes every document
// strictly: an unknown or duplicated field is an error.
func decodeAll(data []byte) ([]runtime.Object, error) {
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d (%v): %w", i, gvk, err)
		}
		objs = append(objs, obj)
	}
}

func renderObjects(t *testing.T, dir string) []runtime.Object {
	t.Helper()
	objs, err := decodeAll(render(t, dir))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if len(objs) == 0 {
		t.Fatalf("%s rendered no objects", dir)
	}
	return objs
}

const goodDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  selector:
    matchLabels: {app: x}
  template:
    metadata:
      labels: {app: x}
    spec:
      containers:
        - name: x
          image: x
          ports:
            - containerPort: 8080
`

// TestStrictDecodingCatchesTypos proves the decoder is strict: the same
// document fails once a field name is misspelt.
func TestStrictDecodingCatchesTypos(t *testing.T) {
	if _, err := decodeAll([]byte(goodDeployment)); err != nil {
		t.Fatalf("well-formed document: %v", err)
	}
	bad := strings.Replace(goodDeployment, "containerPort:", "containerPortt:", 1)
	_, err := decodeAll([]byte("---\n" + goodDeployment + "---\n" + bad))
	if err == nil {
		t.Fatal("containerPortt decoded without error")
	}
	if !runtime.IsStrictDecodingError(errors.Unwrap(err)) || !strings.Contains(err.Error(), "containerPortt") {
		t.Fatalf("want a strict decoding error naming containerPortt, got %v", err)
	}
}

// TestManifestsRender renders every kustomization and checks the workloads.
func TestManifestsRender(t *testing.T) {
	targets := appTargets(t)
	envNames := appEnvNames(t)
	for _, dir := range kustomizations {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			objs := renderObjects(t, dir)
			checkWorkloads(t, objs, targets, envNames)
			checkIngress(t, objs)
		})
	}
}

// TestDistributedLayout checks the distributed overlay runs every target,
// scales Delivery and ships (example) Secrets, one per component.
func TestDistributedLayout(t *testing.T) {
	objs := renderObjects(t, "k8s/overlays/distributed")
	byTarget := map[string]*appsv1.Deployment{}
	var hpa bool
	secrets := map[string]bool{}
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			for _, tg := range containerTargets(o.Spec.Template.Spec) {
				byTarget[tg] = o
			}
		case *corev1.Secret:
			if i := strings.LastIndex(o.Name, "-"); i > 0 {
				secrets[o.Name[:i]] = true // generated: name-<hash>
			}
		default:
			hpa = hpa || reflect.TypeOf(o).Elem().Name() == "HorizontalPodAutoscaler"
		}
	}
	for _, tg := range slices.DeleteFunc(appTargets(t), func(tg string) bool { return tg == "all" }) {
		if byTarget[tg] == nil {
			t.Errorf("no Deployment runs --target=%s", tg)
		}
	}
	if d := byTarget["delivery"]; d != nil && (d.Spec.Replicas == nil || *d.Spec.Replicas != 3) {
		t.Errorf("delivery replicas = %s, want 3", replicas(d.Spec.Replicas))
	}
	if !hpa {
		t.Error("no HorizontalPodAutoscaler")
	}
	for _, s := range []string{"cms-postgres", "cms-nats", "cms-elasticsearch", "cms-redis", "cms-admin"} {
		if !secrets[s] {
			t.Errorf("no (example) Secret %s", s)
		}
	}
}

// TestEmbeddedLayout checks the embedded overlay is one `cms run` with /data
// on a PersistentVolumeClaim.
func TestEmbeddedLayout(t *testing.T) {
	var sts []*appsv1.StatefulSet
	for _, o := range renderObjects(t, "k8s/overlays/embedded") {
		switch o := o.(type) {
		case *appsv1.StatefulSet:
			sts = append(sts, o)
		case *appsv1.Deployment:
			t.Errorf("embedded overlay has Deployment %s", o.Name)
		}
	}
	if len(sts) != 1 {
		t.Fatalf("want one StatefulSet, got %d", len(sts))
	}
	s := sts[0]
	if s.Spec.Replicas == nil || *s.Spec.Replicas != 1 {
		t.Errorf("replicas = %s, want 1", replicas(s.Spec.Replicas))
	}
	c := s.Spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "run" {
		t.Errorf("args = %v, want cms run", c.Args)
	}
	var mounted bool
	for _, m := range c.VolumeMounts {
		for _, pvc := range s.Spec.VolumeClaimTemplates {
			mounted = mounted || (m.MountPath == "/data" && m.Name == pvc.Name)
		}
	}
	if !mounted {
		t.Error("/data is not mounted from a volumeClaimTemplate")
	}
}

func checkWorkloads(t *testing.T, objs []runtime.Object, targets, envNames []string) {
	t.Helper()
	configMaps, secrets := map[string]map[string]bool{}, map[string]map[string]bool{}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			configMaps[o.Name] = keys(o.Data)
		case *corev1.Secret:
			secrets[o.Name] = keys(o.Data)
			for k := range o.StringData {
				secrets[o.Name][k] = true
			}
		}
	}
	workloads := 0
	for _, o := range objs {
		var name string
		var spec corev1.PodSpec
		switch o := o.(type) {
		case *appsv1.Deployment:
			name, spec = "Deployment/"+o.Name, o.Spec.Template.Spec
		case *appsv1.StatefulSet:
			name, spec = "StatefulSet/"+o.Name, o.Spec.Template.Spec
		default:
			continue
		}
		workloads++
		podNonRoot := spec.SecurityContext != nil && isTrue(spec.SecurityContext.RunAsNonRoot)
		for _, c := range spec.Containers {
			where := name + " container " + c.Name
			if c.ReadinessProbe == nil || c.LivenessProbe == nil {
				t.Errorf("%s: readiness probe %v, liveness probe %v", where, c.ReadinessProbe != nil, c.LivenessProbe != nil)
			}
			if len(c.Resources.Requests) == 0 || len(c.Resources.Limits) == 0 {
				t.Errorf("%s: resource requests %v, limits %v", where, c.Resources.Requests, c.Resources.Limits)
			}
			sc := c.SecurityContext
			if !podNonRoot && (sc == nil || !isTrue(sc.RunAsNonRoot)) {
				t.Errorf("%s: runAsNonRoot is not set", where)
			}
			if sc == nil || !isTrue(sc.ReadOnlyRootFilesystem) {
				t.Errorf("%s: readOnlyRootFilesystem is not set", where)
			}
			checkArgs(t, where, c.Args, targets)
			for _, e := range c.Env {
				checkEnvName(t, where, e.Name, envNames)
				if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
					if ks, ok := secrets[r.SecretKeyRef.Name]; ok && !ks[r.SecretKeyRef.Key] {
						t.Errorf("%s: env %s: Secret %s has no key %s", where, e.Name, r.SecretKeyRef.Name, r.SecretKeyRef.Key)
					}
				}
			}
			for _, ef := range c.EnvFrom {
				var ks map[string]bool
				switch {
				case ef.ConfigMapRef != nil:
					ks = configMaps[ef.ConfigMapRef.Name]
				case ef.SecretRef != nil:
					ks = secrets[ef.SecretRef.Name]
				}
				for k := range ks {
					checkEnvName(t, where, ef.Prefix+k, envNames)
				}
			}
		}
	}
	if workloads == 0 {
		t.Error("no Deployment or StatefulSet rendered")
	}
}

// checkArgs accepts `run [flags]` and `serve --target=<t> [flags]` with a
// target the binary knows.
func checkArgs(t *testing.T, where string, args, targets []string) {
	t.Helper()
	if len(args) == 0 || (args[0] != "run" && args[0] != "serve") {
		t.Errorf("%s: args %v: want cms run or cms serve", where, args)
		return
	}
	for i, a := range args {
		var v string
		switch {
		case strings.HasPrefix(a, "--target="):
			v = strings.TrimPrefix(a, "--target=")
		case a == "--target" && i+1 < len(args):
			v = args[i+1]
		default:
			continue
		}
		if args[0] == "run" {
			t.Errorf("%s: cms run takes no --target", where)
		}
		if !slices.Contains(targets, v) {
			t.Errorf("%s: --target=%s: the binary accepts %v", where, v, targets)
		}
	}
}

func checkEnvName(t *testing.T, where, name string, known []string) {
	t.Helper()
	if strings.HasPrefix(name, "CMS_") && !slices.Contains(known, name) {
		t.Errorf("%s: env %s is not read by the binary", where, name)
	}
}

// containerTargets are the --target values of a pod's containers.
func containerTargets(spec corev1.PodSpec) []string {
	var out []string
	for _, c := range spec.Containers {
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--target="); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// checkIngress checks every Ingress backend is a rendered Service port and
// that the four API base paths and the studio are routed.
func checkIngress(t *testing.T, objs []runtime.Object) {
	t.Helper()
	ports := map[string]bool{}
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok {
			for _, p := range s.Spec.Ports {
				ports[s.Name+":"+p.Name] = true
				ports[s.Name+":"+strconv.Itoa(int(p.Port))] = true
			}
		}
	}
	paths := map[string]string{} // path → backend service
	for _, o := range objs {
		ing, ok := o.(*networkingv1.Ingress)
		if !ok {
			continue
		}
		for _, r := range ing.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				svc := p.Backend.Service
				if svc == nil {
					t.Errorf("Ingress %s %s: no service backend", ing.Name, p.Path)
					continue
				}
				paths[p.Path] = svc.Name
				port := svc.Port.Name
				if port == "" {
					port = strconv.Itoa(int(svc.Port.Number))
				}
				if !ports[svc.Name+":"+port] {
					t.Errorf("Ingress %s %s: backend %s:%s is not a rendered Service port", ing.Name, p.Path, svc.Name, port)
				}
			}
		}
	}
	for _, p := range []string{"/apis/cms/v1", "/studio", "/delivery/api", "/apis/rendering/v1", "/apis/index/v1"} {
		if paths[p] == "" {
			t.Errorf("no Ingress routes %s", p)
		}
	}
	// The studio is served by the processes that serve Management.
	if paths["/studio"] != paths["/apis/cms/v1"] {
		t.Errorf("Ingress routes /studio to %q, Management (/apis/cms/v1) to %q", paths["/studio"], paths["/apis/cms/v1"])
	}
}

// appTargets reads the Target* constants of the app package: the values
// `cms serve --target` accepts.
func appTargets(t *testing.T) []string {
	t.Helper()
	f := parseAppConfig(t)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, id := range vs.Names {
			if strings.HasPrefix(id.Name, "Target") && i < len(vs.Values) {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					out = append(out, v)
				}
			}
		}
		return true
	})
	if !slices.Contains(out, "all") || !slices.Contains(out, "delivery") {
		t.Fatalf("targets read from %s look wrong: %v", appConfigFile, out)
	}
	return out
}

// readmeFile holds the table of every setting with its environment
// variable, generated from app.Config (and checked against it) by
// services/cms TestREADMEDocumentsTheDefaults. Reading the names from it
// keeps the one rule that spells a key as CMS_<KEY> in services/cms: this
// module cannot import the binary's packages.
const readmeFile = "../README.md"

// The settings table lies between these lines of readmeFile.
const (
	settingsBegin = "<!-- settings: generated from app.Config"
	settingsEnd   = "<!-- end of settings -->"
)

// appEnvNames returns the environment variable of every setting (the env
// column of the README's generated settings table) plus the four
// component URL names.
func appEnvNames(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), settingsBegin)
	table, _, ok2 := strings.Cut(table, settingsEnd)
	if !ok || !ok2 {
		t.Fatalf("%s lacks the settings table (%q … %q)", readmeFile, settingsBegin, settingsEnd)
	}
	names := slices.Clone(componentURLEnv)
	for line := range strings.Lines(table) {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		if env := strings.Trim(strings.TrimSpace(cells[2]), "`"); strings.HasPrefix(env, "CMS_") {
			names = append(names, env)
		}
	}
	for _, want := range []string{"CMS_HTTP_ADDR", "CMS_ADMIN_PASSWORD", "CMS_STORE_URL"} {
		if !slices.Contains(names, want) {
			t.Fatalf("env names read from %s lack %s: %v", readmeFile, want, names)
		}
	}
	return names
}

func parseAppConfig(t *testing.T) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), appConfigFile, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", appConfigFile, err)
	}
	return f
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func replicas(n *int32) string {
	if n == nil {
		return "unset"
	}
	return strconv.Itoa(int(*n))
}

func isTrue(b *bool) bool { return b != nil && *b }

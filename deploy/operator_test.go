package deploy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// What a cluster operator checks before accepting the manifests: default
// deny plus one NetworkPolicy per workload allowing only its ports and the
// components it talks to; only the Secrets of those components mounted;
// a preStop pause equal to the drain delay within the grace period;
// generated (hash-suffixed) ConfigMaps; a pinned image; topology spread;
// probes on /readyz (readiness) and /healthz (liveness only).

// appComponentsFile holds the target table: which components each target opens.
const appComponentsFile = "../services/internal/app/targettable.go"

// componentEnv is the URL env var of each component (blobs live in the
// NATS object store in distributed mode) and componentPort its port.
var (
	componentEnv  = map[string]string{"store": "CMS_POSTGRES_URL", "events": "CMS_NATS_URL", "search": "CMS_ELASTICSEARCH_URL", "cache": "CMS_REDIS_URL", "blobs": "CMS_NATS_URL"}
	componentPort = map[string]int32{"CMS_POSTGRES_URL": 5432, "CMS_NATS_URL": 4222, "CMS_ELASTICSEARCH_URL": 9200, "CMS_REDIS_URL": 6379}
)

const dnsPort = 53

func TestOperatorRequirements(t *testing.T) {
	needs := appNeeds(t)
	for _, dir := range kustomizations {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			for _, p := range operatorProblems(renderObjects(t, dir), needs) {
				t.Error(p)
			}
		})
	}
}

// TestOperatorChecksCanFail breaks the rendered distributed overlay one
// requirement at a time; each break must be reported.
func TestOperatorChecksCanFail(t *testing.T) {
	needs := appNeeds(t)
	pod := func(objs []runtime.Object, target string) *corev1.PodSpec {
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok && slices.Contains(containerTargets(d.Spec.Template.Spec), target) {
				return &d.Spec.Template.Spec
			}
		}
		t.Fatalf("no %s Deployment", target)
		return nil
	}
	deliveryPod := func(objs []runtime.Object) *corev1.PodSpec { return pod(objs, "delivery") }
	breaks := map[string]func([]runtime.Object) []runtime.Object{
		"latest image": func(objs []runtime.Object) []runtime.Object {
			deliveryPod(objs).Containers[0].Image = "ghcr.io/cmsplatform/cms:latest"
			return objs
		},
		"extra secret": func(objs []runtime.Object) []runtime.Object {
			c := &pod(objs, "index").Containers[0] // the Index group has no cache
			c.Env = append(c.Env, corev1.EnvVar{Name: "CMS_REDIS_URL", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cms-redis"}, Key: "CMS_REDIS_URL"}}})
			return objs
		},
		"no preStop": func(objs []runtime.Object) []runtime.Object {
			deliveryPod(objs).Containers[0].Lifecycle = nil
			return objs
		},
		"no spread": func(objs []runtime.Object) []runtime.Object {
			deliveryPod(objs).TopologySpreadConstraints = nil
			return objs
		},
		"liveness on readyz": func(objs []runtime.Object) []runtime.Object {
			deliveryPod(objs).Containers[0].LivenessProbe.HTTPGet.Path = "/readyz"
			return objs
		},
		"plain ConfigMap name": func(objs []runtime.Object) []runtime.Object {
			for _, o := range objs {
				if cm, ok := o.(*corev1.ConfigMap); ok {
					cm.Name = "cms-config"
				}
			}
			deliveryPod(objs).Containers[0].EnvFrom[0].ConfigMapRef.Name = "cms-config"
			return objs
		},
		"no default deny": func(objs []runtime.Object) []runtime.Object {
			return slices.DeleteFunc(objs, func(o runtime.Object) bool {
				np, ok := o.(*networkingv1.NetworkPolicy)
				return ok && len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0
			})
		},
		"default deny over the namespace": func(objs []runtime.Object) []runtime.Object {
			for _, o := range objs {
				if np, ok := o.(*networkingv1.NetworkPolicy); ok && len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0 {
					np.Spec.PodSelector = metav1.LabelSelector{}
				}
			}
			return objs
		},
		"internet egress outside webhooks": func(objs []runtime.Object) []runtime.Object {
			for _, o := range objs {
				if np, ok := o.(*networkingv1.NetworkPolicy); ok && np.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] == "jobs" {
					p := intstr.FromInt32(443)
					np.Spec.Egress = append(np.Spec.Egress, networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: &p}}})
				}
			}
			return objs
		},
		"egress to an unneeded component": func(objs []runtime.Object) []runtime.Object {
			for _, o := range objs {
				if np, ok := o.(*networkingv1.NetworkPolicy); ok && np.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] == "index" {
					p := intstr.FromInt32(6379)
					np.Spec.Egress = append(np.Spec.Egress, networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: &p}}})
				}
			}
			return objs
		},
	}
	if ps := operatorProblems(renderObjects(t, "k8s/overlays/distributed"), needs); len(ps) != 0 {
		t.Fatalf("the unbroken overlay already fails: %v", ps)
	}
	for name, brk := range breaks {
		if ps := operatorProblems(brk(renderObjects(t, "k8s/overlays/distributed")), needs); len(ps) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}

// operatorProblems lists every requirement objs miss.
func operatorProblems(objs []runtime.Object, needs map[string][]string) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	configMaps := map[string]map[string]string{}
	var policies []*networkingv1.NetworkPolicy
	defaultDeny := false
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			configMaps[o.Name] = o.Data
		case *corev1.Secret:
			if n := len(o.Data) + len(o.StringData); n != 1 {
				add("Secret %s holds %d keys: want one component's credentials per Secret", o.Name, n)
			}
		case *networkingv1.NetworkPolicy:
			if !projectScoped(o.Spec.PodSelector) {
				add("NetworkPolicy %s selects pods outside the project (podSelector %v)", o.Name, o.Spec.PodSelector)
				continue
			}
			if len(o.Spec.Ingress) == 0 && len(o.Spec.Egress) == 0 {
				defaultDeny = defaultDeny || (reflect.DeepEqual(o.Spec.PodSelector.MatchLabels, projectPods) &&
					slices.Contains(o.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) &&
					slices.Contains(o.Spec.PolicyTypes, networkingv1.PolicyTypeEgress))
				continue
			}
			policies = append(policies, o)
		}
	}
	if !defaultDeny {
		add("no default-deny NetworkPolicy (podSelector %v, Ingress and Egress, no rules)", projectPods)
	}
	for _, o := range objs {
		var name string
		var tmpl corev1.PodTemplateSpec
		isDeployment := false
		switch o := o.(type) {
		case *appsv1.Deployment:
			name, tmpl, isDeployment = "Deployment/"+o.Name, o.Spec.Template, true
		case *appsv1.StatefulSet:
			name, tmpl = "StatefulSet/"+o.Name, o.Spec.Template
		default:
			continue
		}
		spec := tmpl.Spec
		if isDeployment && !spreads(spec, tmpl.Labels) {
			add("%s: no topologySpreadConstraint over kubernetes.io/hostname selecting its pods", name)
		}
		var ports []corev1.ContainerPort
		mounted := map[string]bool{} // component URL env vars from Secrets
		for _, c := range spec.Containers {
			where := name + " container " + c.Name
			ports = append(ports, c.Ports...)
			if !pinned(c.Image) {
				add("%s: image %q is not pinned to a tag or digest (no :latest)", where, c.Image)
			}
			if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
				add("%s: readiness probe is not GET /readyz", where)
			}
			if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
				add("%s: liveness probe is not GET /healthz (liveness only)", where)
			}
			env := map[string]string{}
			for _, ef := range c.EnvFrom {
				if ef.ConfigMapRef == nil {
					continue
				}
				data, ok := configMaps[ef.ConfigMapRef.Name]
				if !ok || !hashSuffixed.MatchString(ef.ConfigMapRef.Name) {
					add("%s: ConfigMap %s is not a rendered generated (hash-suffixed) ConfigMap", where, ef.ConfigMapRef.Name)
				}
				for k, v := range data {
					env[ef.Prefix+k] = v
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					if _, ok := componentPort[e.Name]; ok {
						mounted[e.Name] = true
					}
				} else if e.Value != "" {
					env[e.Name] = e.Value
				}
			}
			serve := len(c.Args) > 0 && c.Args[0] == "serve"
			if serve {
				want := map[string]bool{}
				for _, tg := range containerTargets(spec) {
					for _, comp := range needs[tg] {
						want[componentEnv[comp]] = true
					}
				}
				for k := range mounted {
					if !want[k] {
						add("%s: mounts %s, which its target does not use", where, k)
					}
				}
				for k := range want {
					if !mounted[k] {
						add("%s: needs %s from a Secret", where, k)
					}
				}
			}
			out = append(out, drainProblems(where, c, env, spec.TerminationGracePeriodSeconds, serve)...)
		}
		if !selects(projectPods, tmpl.Labels) {
			add("%s: pod labels %v lack %v: the default deny does not cover its pods", name, tmpl.Labels, projectPods)
		}
		out = append(out, policyProblems(name, tmpl.Labels, ports, mounted, deliversWebhooks(spec), policies)...)
	}
	return out
}

var hashSuffixed = regexp.MustCompile(`-[a-z0-9]{10}$`)

// pinned: a digest, or a tag other than latest.
func pinned(image string) bool {
	if strings.Contains(image, "@sha256:") {
		return true
	}
	i := strings.LastIndex(image, ":")
	return i > strings.LastIndex(image, "/") && image[i+1:] != "latest" && image[i+1:] != ""
}

func spreads(spec corev1.PodSpec, labels map[string]string) bool {
	for _, c := range spec.TopologySpreadConstraints {
		if c.TopologyKey == "kubernetes.io/hostname" && c.LabelSelector != nil && len(c.LabelSelector.MatchLabels) > 0 &&
			selects(c.LabelSelector.MatchLabels, labels) {
			return true
		}
	}
	return false
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// drainProblems: a `serve` pod sets CMS_DRAIN_DELAY and pauses in preStop
// exactly that long; any pod with a preStop pause or a drain delay has a
// grace period covering pause + drain + CMS_SHUTDOWN_TIMEOUT.
func drainProblems(where string, c corev1.Container, env map[string]string, grace *int64, serve bool) []string {
	var out []string
	drain, err := time.ParseDuration(env["CMS_DRAIN_DELAY"])
	if err != nil && (serve || env["CMS_DRAIN_DELAY"] != "") {
		return []string{fmt.Sprintf("%s: CMS_DRAIN_DELAY %q is not set to a duration", where, env["CMS_DRAIN_DELAY"])}
	}
	var pause time.Duration
	if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
		pause = time.Duration(l.PreStop.Sleep.Seconds) * time.Second
	}
	if pause != drain {
		out = append(out, fmt.Sprintf("%s: preStop sleep %v does not match CMS_DRAIN_DELAY %v", where, pause, drain))
	}
	if pause == 0 && drain == 0 {
		return out
	}
	shutdown, err := time.ParseDuration(env["CMS_SHUTDOWN_TIMEOUT"])
	if err != nil {
		return append(out, fmt.Sprintf("%s: CMS_SHUTDOWN_TIMEOUT is not set to a duration", where))
	}
	if g := time.Duration(ptrOr(grace, 30)) * time.Second; g <= pause+drain+shutdown {
		out = append(out, fmt.Sprintf("%s: terminationGracePeriodSeconds %v does not cover preStop %v + drain %v + shutdown %v",
			where, g, pause, drain, shutdown))
	}
	return out
}

func ptrOr(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

// policyProblems: exactly one NetworkPolicy selects the pods, for Ingress
// and Egress; its ingress ports are the pod's; its egress goes to DNS, to
// the ports of the components the pod has credentials for and, if the pod
// delivers webhooks, to 443 and 80: all of them and nothing else.
func policyProblems(name string, labels map[string]string, ports []corev1.ContainerPort, mounted map[string]bool, webhooks bool, policies []*networkingv1.NetworkPolicy) []string {
	var out []string
	var mine []*networkingv1.NetworkPolicy
	for _, np := range policies {
		if selects(np.Spec.PodSelector.MatchLabels, labels) {
			mine = append(mine, np)
		}
	}
	if len(mine) != 1 {
		return []string{fmt.Sprintf("%s: %d NetworkPolicies select its pods, want 1", name, len(mine))}
	}
	np := mine[0]
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		out = append(out, fmt.Sprintf("%s: NetworkPolicy %s does not cover Ingress and Egress", name, np.Name))
	}
	for _, r := range np.Spec.Ingress {
		if len(r.From) == 0 || len(r.Ports) == 0 {
			out = append(out, fmt.Sprintf("%s: NetworkPolicy %s has an ingress rule open to every peer or port", name, np.Name))
		}
		for _, p := range r.Ports {
			if p.Port == nil || !slices.ContainsFunc(ports, func(cp corev1.ContainerPort) bool {
				return (p.Port.Type == intstr.String && p.Port.StrVal == cp.Name) || (p.Port.Type == intstr.Int && p.Port.IntVal == cp.ContainerPort)
			}) {
				out = append(out, fmt.Sprintf("%s: NetworkPolicy %s admits port %v, which no container serves", name, np.Name, p.Port))
			}
		}
	}
	want := map[int32]bool{}
	for env := range mounted {
		want[componentPort[env]] = true
	}
	if webhooks { // the receivers: HTTPS and HTTP
		want[443], want[80] = true, true
	}
	got := map[int32]bool{}
	for _, r := range np.Spec.Egress {
		if len(r.Ports) == 0 {
			out = append(out, fmt.Sprintf("%s: NetworkPolicy %s has an egress rule to every port", name, np.Name))
		}
		for _, p := range r.Ports {
			if p.Port == nil || p.Port.Type != intstr.Int {
				out = append(out, fmt.Sprintf("%s: NetworkPolicy %s: egress port %v is not a number", name, np.Name, p.Port))
				continue
			}
			got[p.Port.IntVal] = true
			if p.Port.IntVal != dnsPort && !want[p.Port.IntVal] {
				out = append(out, fmt.Sprintf("%s: NetworkPolicy %s allows egress to port %d, which it does not use", name, np.Name, p.Port.IntVal))
			}
		}
	}
	for p := range want {
		if !got[p] {
			out = append(out, fmt.Sprintf("%s: NetworkPolicy %s blocks port %d of a component it uses", name, np.Name, p))
		}
	}
	if len(want) > 0 && !got[dnsPort] {
		out = append(out, fmt.Sprintf("%s: NetworkPolicy %s blocks DNS", name, np.Name))
	}
	return out
}

// appNeeds reads the `needs` map of the app package: target → components.
func appNeeds(t *testing.T) map[string][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), appComponentsFile, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", appComponentsFile, err)
	}
	consts := map[string]string{}
	for _, tg := range appTargets(t) {
		consts["Target"+strings.ToUpper(tg[:1])+tg[1:]] = tg
	}
	out := map[string][]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "targetTable" || len(vs.Values) != 1 {
			return true
		}
		lit, _ := vs.Values[0].(*ast.CompositeLit)
		for _, row := range lit.Elts {
			var tg string
			var opens []string
			for _, el := range row.(*ast.CompositeLit).Elts {
				kv := el.(*ast.KeyValueExpr)
				switch kv.Key.(*ast.Ident).Name {
				case "name":
					key, _ := kv.Value.(*ast.Ident)
					if key == nil || consts[key.Name] == "" {
						t.Fatalf("%s: a row's name is not a known target", appComponentsFile)
					}
					tg = consts[key.Name]
				case "opens":
					for _, c := range kv.Value.(*ast.CompositeLit).Elts {
						s, _ := strconv.Unquote(c.(*ast.BasicLit).Value)
						opens = append(opens, s)
					}
				}
			}
			out[tg] = opens
		}
		return false
	})
	if len(out["delivery"]) == 0 || len(out["management"]) == 0 {
		t.Fatalf("needs read from %s look wrong: %v", appComponentsFile, out)
	}
	return out
}

package deploy

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// projectPods is the label every pod of the project carries and the
// default-deny NetworkPolicy selects: never every pod of the namespace.
var projectPods = map[string]string{"app.kubernetes.io/part-of": "cms"}

// externalExample renders the distributed overlay with
// components/external-components: each component reached by CIDR.
const externalExample = "k8s/examples/managed-components"

// externalCIDRs are the example addresses of components/external-components
// and the port each must be admitted on (nowhere else).
var externalCIDRs = map[string]int32{"192.0.2.10/32": 5432, "192.0.2.20/32": 4222, "198.51.100.0/28": 9200, "203.0.113.5/32": 6379}

// publicProbes are addresses on the internet: a rule admitting one of them
// is internet egress.
var publicProbes = []netip.Addr{netip.MustParseAddr("1.1.1.1"), netip.MustParseAddr("2606:4700::1111")}

// projectScoped: the selector names the project's pods by label (part-of
// or name cms), so applied to a shared namespace it leaves other pods alone.
func projectScoped(sel metav1.LabelSelector) bool {
	return sel.MatchLabels["app.kubernetes.io/part-of"] == "cms" || sel.MatchLabels["app.kubernetes.io/name"] == "cms"
}

// deliversWebhooks: the pod sends webhook deliveries: the dispatcher
// (`cms run` or `cms serve --target=webhooks`) or management's test
// deliveries.
func deliversWebhooks(spec corev1.PodSpec) bool {
	for _, c := range spec.Containers {
		if len(c.Args) > 0 && c.Args[0] == "run" {
			return true
		}
	}
	// Management sends an administrator's test deliveries itself
	// (Webhook_SendTestDelivery).
	targets := containerTargets(spec)
	return slices.Contains(targets, "webhooks") || slices.Contains(targets, "management")
}

// peersAdmit: an ipBlock peer among to (or no peer at all) admits addr.
func peersAdmit(to []networkingv1.NetworkPolicyPeer, addr netip.Addr) bool {
	if len(to) == 0 {
		return true
	}
	for _, p := range to {
		if p.IPBlock == nil {
			continue
		}
		if pfx, err := netip.ParsePrefix(p.IPBlock.CIDR); err != nil || !pfx.Contains(addr) {
			continue
		}
		if !slices.ContainsFunc(p.IPBlock.Except, func(e string) bool {
			ex, err := netip.ParsePrefix(e)
			return err == nil && ex.Contains(addr)
		}) {
			return true
		}
	}
	return false
}

func internetRule(r networkingv1.NetworkPolicyEgressRule) bool {
	return slices.ContainsFunc(publicProbes, func(a netip.Addr) bool { return peersAdmit(r.To, a) })
}

// tcpPorts of a rule, "all" when it has none.
func tcpPorts(r networkingv1.NetworkPolicyEgressRule) []string {
	if len(r.Ports) == 0 {
		return []string{"all"}
	}
	var out []string
	for _, p := range r.Ports {
		proto := "TCP"
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		out = append(out, fmt.Sprintf("%s/%v", proto, p.Port))
	}
	slices.Sort(out)
	return out
}

type workload struct {
	name   string
	labels map[string]string
	spec   corev1.PodSpec
}

func workloads(objs []runtime.Object) []workload {
	var out []workload
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{"Deployment/" + o.Name, o.Spec.Template.Labels, o.Spec.Template.Spec})
		case *appsv1.StatefulSet:
			out = append(out, workload{"StatefulSet/" + o.Name, o.Spec.Template.Labels, o.Spec.Template.Spec})
		}
	}
	return out
}

func policiesOf(objs []runtime.Object) []*networkingv1.NetworkPolicy {
	var out []*networkingv1.NetworkPolicy
	for _, o := range objs {
		if np, ok := o.(*networkingv1.NetworkPolicy); ok {
			out = append(out, np)
		}
	}
	return out
}

// TestWebhookEgress: a workload runs the dispatcher in every layout; its
// policy has one rule to 0.0.0.0/0 and ::/0 on TCP 443 and 80 only; no
// other policy admits an internet address.
func TestWebhookEgress(t *testing.T) {
	for _, dir := range kustomizations {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			objs := renderObjects(t, dir)
			ws, policies := workloads(objs), policiesOf(objs)
			dispatchers := 0
			for _, w := range ws {
				if deliversWebhooks(w.spec) {
					dispatchers++
				}
			}
			if dispatchers == 0 {
				t.Error("no workload runs the webhook dispatcher (cms run or cms serve --target=webhooks)")
			}
			for _, np := range policies {
				var selected []workload
				for _, w := range ws {
					if selects(np.Spec.PodSelector.MatchLabels, w.labels) {
						selected = append(selected, w)
					}
				}
				var internet []networkingv1.NetworkPolicyEgressRule
				for _, r := range np.Spec.Egress {
					if internetRule(r) {
						internet = append(internet, r)
					}
				}
				if len(internet) == 0 {
					continue
				}
				for _, w := range selected {
					if !deliversWebhooks(w.spec) {
						t.Errorf("NetworkPolicy %s gives %s (no webhook dispatcher) internet egress", np.Name, w.name)
					}
				}
			}
			for _, w := range ws {
				if !deliversWebhooks(w.spec) {
					continue
				}
				var rules []networkingv1.NetworkPolicyEgressRule
				for _, np := range policies {
					if len(np.Spec.Egress) > 0 && selects(np.Spec.PodSelector.MatchLabels, w.labels) {
						for _, r := range np.Spec.Egress {
							if internetRule(r) {
								rules = append(rules, r)
							}
						}
					}
				}
				if len(rules) != 1 {
					t.Errorf("%s delivers webhooks: %d internet egress rules, want 1", w.name, len(rules))
					continue
				}
				r := rules[0]
				if got, want := tcpPorts(r), []string{"TCP/443", "TCP/80"}; !slices.Equal(got, want) {
					t.Errorf("%s: internet egress on %v, want %v only", w.name, got, want)
				}
				var cidrs []string
				for _, p := range r.To {
					if p.IPBlock != nil {
						cidrs = append(cidrs, p.IPBlock.CIDR)
					}
				}
				if !slices.Contains(cidrs, "0.0.0.0/0") || !slices.Contains(cidrs, "::/0") {
					t.Errorf("%s: internet egress to %v, want 0.0.0.0/0 and ::/0", w.name, cidrs)
				}
			}
		})
	}
}

// TestPoliciesSelectOnlyProjectPods: no NetworkPolicy selects a pod that
// is not the project's, and the default deny covers every project pod.
func TestPoliciesSelectOnlyProjectPods(t *testing.T) {
	foreign := map[string]string{"app": "unrelated"}
	for _, dir := range kustomizations {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			objs := renderObjects(t, dir)
			var deny []*networkingv1.NetworkPolicy
			for _, np := range policiesOf(objs) {
				sel := np.Spec.PodSelector
				if !projectScoped(sel) || len(sel.MatchExpressions) != 0 || selects(sel.MatchLabels, foreign) {
					t.Errorf("NetworkPolicy %s: podSelector %v selects pods outside the project", np.Name, sel)
				}
				if len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0 {
					deny = append(deny, np)
				}
			}
			if len(deny) != 1 {
				t.Fatalf("%d default-deny policies, want 1", len(deny))
			}
			for _, w := range workloads(objs) {
				if !selects(deny[0].Spec.PodSelector.MatchLabels, w.labels) {
					t.Errorf("%s: pod labels %v are not selected by %s", w.name, w.labels, deny[0].Name)
				}
			}
		})
	}
}

// TestExternalComponentsExample renders the managed-components example:
// each workload's policy admits the example address of every component it
// opens on that component's port, and no example address on another port.
func TestExternalComponentsExample(t *testing.T) {
	objs := renderObjects(t, externalExample)
	policies := policiesOf(objs)
	checked := 0
	for _, w := range workloads(objs) {
		var np *networkingv1.NetworkPolicy
		for _, p := range policies {
			if len(p.Spec.Egress) > 0 && selects(p.Spec.PodSelector.MatchLabels, w.labels) {
				np = p
			}
		}
		if np == nil {
			t.Errorf("%s: no policy with egress", w.name)
			continue
		}
		uses := map[int32]bool{}
		for _, c := range w.spec.Containers {
			for _, e := range c.Env {
				if p, ok := componentPort[e.Name]; ok && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					uses[p] = true
				}
			}
		}
		for cidr, port := range externalCIDRs {
			addr := netip.MustParsePrefix(cidr).Addr()
			for _, r := range np.Spec.Egress {
				if !peersAdmit(r.To, addr) || internetRule(r) {
					continue
				}
				for _, p := range r.Ports {
					if p.Port == nil || p.Port.Type != intstr.Int || p.Port.IntVal != port {
						t.Errorf("%s: NetworkPolicy %s admits %s (port %d) on %v", w.name, np.Name, cidr, port, p.Port)
					}
				}
			}
			if !uses[port] {
				continue
			}
			checked++
			if !slices.ContainsFunc(np.Spec.Egress, func(r networkingv1.NetworkPolicyEgressRule) bool {
				return !internetRule(r) && peersAdmit(r.To, addr) && slices.ContainsFunc(r.Ports, func(p networkingv1.NetworkPolicyPort) bool {
					return p.Port != nil && p.Port.IntVal == port
				})
			}) {
				t.Errorf("%s: NetworkPolicy %s does not admit %s on port %d", w.name, np.Name, cidr, port)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no workload uses a component")
	}
}

package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// releaseVersion is the VERSION file at the repository root: what `make
// build` and `make image` stamp and what the manifests pin.
func releaseVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`).MatchString(v) {
		t.Fatalf("VERSION %q is not a semantic version", v)
	}
	return v
}

// TestManifestsPinTheReleaseVersion: every cms container of every layout runs
// the image tag that the build stamps into the binary.
func TestManifestsPinTheReleaseVersion(t *testing.T) {
	want := "ghcr.io/cmsplatform/cms:" + releaseVersion(t)
	for _, dir := range kustomizations {
		n := 0
		for _, obj := range renderObjects(t, dir) {
			spec := podSpecOf(obj)
			if spec == nil {
				continue
			}
			for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
				if strings.Contains(c.Image, "cmsplatform/cms") {
					n++
					if c.Image != want {
						t.Errorf("%s: container %s runs %s, the build stamps %s", dir, c.Name, c.Image, want)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no container runs the cms image", dir)
		}
	}
}

// TestImageStampsVersionCommitAndDate builds the binary with the linker flags
// of the Dockerfile's RUN go build line (with the ARG values make image
// passes) and checks that `cms version` of the result prints them, and that
// make image passes all three from the VERSION file and git.
func TestImageStampsVersionCommitAndDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dockerfile, err := os.ReadFile("docker/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := strings.ReplaceAll(string(dockerfile), "\\\n", " ")
	for _, arg := range []string{"VERSION", "COMMIT", "BUILD_DATE"} {
		if strings.Count(df, "\nARG "+arg+"=") != 2 {
			t.Errorf("Dockerfile: ARG %s must be declared in both stages (the build and the labels)", arg)
		}
	}
	for _, label := range []string{`org.opencontainers.image.version="${VERSION}"`, `org.opencontainers.image.revision="${COMMIT}"`} {
		if !strings.Contains(df, label) {
			t.Errorf("Dockerfile: no label %s", label)
		}
	}
	m := regexp.MustCompile(`(?m)^RUN [^\n]*?(go build [^\n]*)$`).FindStringSubmatch(df)
	if m == nil {
		t.Fatal("Dockerfile: no RUN … go build line")
	}
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, pass := range []string{"--build-arg VERSION=$(VERSION)", "--build-arg COMMIT=$(COMMIT)", "--build-arg BUILD_DATE=$(BUILD_DATE)", "-t $(IMAGE):$(VERSION)"} {
		if !strings.Contains(string(makefile), pass) {
			t.Errorf("Makefile: make image does not pass %s", pass)
		}
	}
	if !strings.Contains(string(makefile), "VERSION    ?= $(shell cat VERSION") {
		t.Error("Makefile: VERSION is not read from the VERSION file")
	}

	// The Dockerfile's -ldflags with the arguments make image passes; the
	// rest of its flags (-trimpath, CGO_ENABLED=0) only change how every
	// package is compiled, which would rebuild them all here.
	ld := regexp.MustCompile(`-ldflags="([^"]*)"`).FindStringSubmatch(m[1])
	if ld == nil || !strings.Contains(m[1], "./services/cms") {
		t.Fatalf("Dockerfile: the build line %q has no -ldflags=\"…\" or does not build ./services/cms", m[1])
	}
	version, commit, date := releaseVersion(t), "0123456789abcdef0123456789abcdef01234567", "2026-12-01T00:00:00Z"
	out := filepath.Join(t.TempDir(), "cms")
	ldflags := strings.NewReplacer("${VERSION}", version, "${COMMIT}", commit, "${BUILD_DATE}", date).Replace(ld[1])
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags="+ldflags, "-o", out, "./services/cms")
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags=%q: %v\n%s", ldflags, err, b)
	}
	got, err := exec.CommandContext(ctx, out, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("cms version: %v\n%s", err, got)
	}
	want := "cms " + version + "\ncommit " + commit + "\nbuilt " + date + "\n"
	if string(got) != want {
		t.Errorf("cms version of the image's build printed\n%s\nwant\n%s", got, want)
	}
}

// podSpecOf is the pod template of a Deployment or StatefulSet, nil for
// other objects.
func podSpecOf(obj runtime.Object) *corev1.PodSpec {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		return &o.Spec.Template.Spec
	}
	return nil
}

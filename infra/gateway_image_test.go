package main

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseECRImage(t *testing.T) {
	tests := []struct {
		uri       string
		ok        bool
		repo, ref string
		arn       string
	}{
		{uri: "123456789012.dkr.ecr.eu-west-1.amazonaws.com/myriarch/gateway:1.2.3", ok: true, repo: "myriarch/gateway", ref: "1.2.3", arn: "arn:aws:ecr:eu-west-1:123456789012:repository/myriarch/gateway"}, // tag
		{uri: "123456789012.dkr.ecr.eu-west-1.amazonaws.com/gw@sha256:abc", ok: true, repo: "gw", ref: "sha256:abc", arn: "arn:aws:ecr:eu-west-1:123456789012:repository/gw"},                                 // digest
		{uri: "123456789012.dkr.ecr.eu-west-1.amazonaws.com/gw", ok: true, repo: "gw", ref: "latest", arn: "arn:aws:ecr:eu-west-1:123456789012:repository/gw"},                                                // no tag: latest, as docker pull
		{uri: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/gw:1", ok: true, repo: "gw", ref: "1", arn: "arn:aws-cn:ecr:cn-north-1:123456789012:repository/gw"},                                           // China partition
		{uri: "public.ecr.aws/myriarch/gateway:1", ok: false, repo: "", ref: "", arn: ""},                                                                                                                     // public registry: pulled as is
		{uri: "ghcr.io/myriarch/gateway:1", ok: false, repo: "", ref: "", arn: ""},                                                                                                                            // other registry
		{uri: "localhost:5000/gw:1", ok: false, repo: "", ref: "", arn: ""},                                                                                                                                   // a port is not a tag
		{uri: "", ok: false, repo: "", ref: "", arn: ""},                                                                                                                                                      // not set
	}
	for _, tt := range tests {
		img, ok := parseECRImage(tt.uri)
		if ok != tt.ok || (ok && (img.repository != tt.repo || img.tagOrDigest != tt.ref || img.repositoryArn() != tt.arn)) {
			t.Errorf("%q: got %+v %v arn %s", tt.uri, img, ok, img.repositoryArn())
		}
	}
}

// The image's build context is an allow-list: everything the Dockerfile
// copies from the context must be in it, or the deploy-time build fails.
// "COPY . ." copies the whole (allow-listed) context: then every package
// of this module that the gateway imports must be in it.
func TestGatewayContext_HoldsWhatTheDockerfileCopies(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", gatewayDockerfile))
	if err != nil {
		t.Fatalf("%v (the gateway's image is built from it)", err)
	}
	allowed := map[string]bool{}
	for _, p := range gatewayContext {
		allowed[p] = true
	}
	copies := 0
	for _, line := range strings.Split(string(raw), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 || (!strings.EqualFold(fields[0], "COPY") && !strings.EqualFold(fields[0], "ADD")) {
			continue
		}
		var sources []string
		fromStage := false
		for _, f := range fields[1 : len(fields)-1] {
			if strings.HasPrefix(f, "--from=") {
				fromStage = true
			}
			if !strings.HasPrefix(f, "--") {
				sources = append(sources, f)
			}
		}
		if fromStage {
			continue // copies from another build stage, not from the context
		}
		for _, src := range sources {
			copies++
			top, _, _ := strings.Cut(strings.TrimPrefix(path.Clean(src), "./"), "/")
			switch {
			case top == ".":
				checkGatewayImports(t, allowed)
			case !allowed[top]:
				t.Errorf("%s copies %s, outside the build context %v (gatewayContext in infra/gateway.go)", gatewayDockerfile, src, gatewayContext)
			}
		}
	}
	if copies == 0 {
		t.Errorf("%s copies nothing from its context", gatewayDockerfile)
	}
}

// checkGatewayImports fails for a package of the module that the gateway
// needs and that lies outside the build context.
func checkGatewayImports(t *testing.T, allowed map[string]bool) {
	t.Helper()
	const module = "github.com/myriarch/myriarch/"
	cmd := exec.Command("go", "list", "-deps", "./opamp-gateway")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./opamp-gateway: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if !allowed[top] {
			t.Errorf("the gateway imports %s, outside its image's build context %v", pkg, gatewayContext)
		}
	}
}

// The build stage cross-compiles: it runs on the builder's platform
// ($BUILDPLATFORM) and builds for the image's ($TARGETOS/$TARGETARCH), so
// that an arm64 image is built on an x86 host without emulation.
func TestGatewayImage_CrossCompiles(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", gatewayDockerfile))
	if err != nil {
		t.Fatal(err)
	}
	df := string(raw)
	for _, want := range []string{"FROM --platform=$BUILDPLATFORM golang:", "ARG TARGETOS TARGETARCH", "GOOS=$TARGETOS GOARCH=$TARGETARCH go build"} {
		if !strings.Contains(df, want) {
			t.Errorf("%s lacks %q", gatewayDockerfile, want)
		}
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecr"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecrassets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// gatewayContext is what the image's build context holds (a docker-ignore
// allow-list), so that unrelated files neither change the image's hash
// nor get copied into cdk.out: every path the Dockerfile COPYs must be here
// (gateway_test.go checks it).
var gatewayContext = []string{"go.mod", "go.sum", "core", "adapters", "opamp-gateway"}

// checkGatewayImage fails early when neither an image URI nor the
// Dockerfile is there, instead of CDK's error about a missing file.
func checkGatewayImage(c Config) error {
	if c.GatewayImage != "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(c.RepoRoot, gatewayDockerfile)); err != nil {
		return fmt.Errorf("%s not found under %s: add it, or set gatewayImage (-c gatewayImage=<uri>) to deploy a published image", gatewayDockerfile, c.RepoRoot)
	}
	return nil
}

// gatewayImage is the configured image URI, else an image built from
// opamp-gateway/Dockerfile by `cdk deploy` (synth only stages its context;
// it runs no Docker). An image in ECR is referenced as a repository, so
// that the task may pull it; any other registry must be public.
func gatewayImage(scope constructs.Construct, c Config) awsecs.ContainerImage {
	if ref, ok := parseECRImage(c.GatewayImage); ok {
		repo := awsecr.Repository_FromRepositoryAttributes(scope, jsii.String("GatewayRepository"), &awsecr.RepositoryAttributes{
			RepositoryArn:  jsii.String(ref.repositoryArn()),
			RepositoryName: jsii.String(ref.repository),
		})
		return awsecs.ContainerImage_FromEcrRepository(repo, jsii.String(ref.tagOrDigest))
	}
	if c.GatewayImage != "" {
		return awsecs.ContainerImage_FromRegistry(jsii.String(c.GatewayImage), nil)
	}
	exclude := []*string{jsii.String("*")}
	for _, p := range gatewayContext {
		exclude = append(exclude, jsii.String("!"+p))
	}
	return awsecs.ContainerImage_FromAsset(jsii.String(c.RepoRoot), &awsecs.AssetImageProps{
		File:       jsii.String(gatewayDockerfile),
		Exclude:    &exclude,
		IgnoreMode: awscdk.IgnoreMode_DOCKER,
		Platform:   imagePlatform(c),
	})
}

// ecrImage is an image URI of a private ECR registry:
// <account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository>(:<tag>|@<digest>).
type ecrImage struct {
	account, region, partition, repository, tagOrDigest string
}

var ecrHost = regexp.MustCompile(`^([0-9]{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$`)

func parseECRImage(uri string) (ecrImage, bool) {
	host, path, ok := strings.Cut(uri, "/")
	m := ecrHost.FindStringSubmatch(host)
	if !ok || m == nil || path == "" {
		return ecrImage{}, false
	}
	img := ecrImage{account: m[1], region: m[2], partition: "aws", tagOrDigest: "latest"}
	if m[3] != "" {
		img.partition = "aws-cn"
	}
	if repo, digest, ok := strings.Cut(path, "@"); ok {
		img.repository, img.tagOrDigest = repo, digest
	} else if i := strings.LastIndex(path, ":"); i >= 0 {
		img.repository, img.tagOrDigest = path[:i], path[i+1:]
	} else {
		img.repository = path
	}
	return img, img.repository != "" && img.tagOrDigest != ""
}

func (e ecrImage) repositoryArn() string {
	return fmt.Sprintf("arn:%s:ecr:%s:%s:repository/%s", e.partition, e.region, e.account, e.repository)
}

func cpuArchitecture(c Config) awsecs.CpuArchitecture {
	if c.GatewayArch == "x86_64" {
		return awsecs.CpuArchitecture_X86_64()
	}
	return awsecs.CpuArchitecture_ARM64()
}

func imagePlatform(c Config) awsecrassets.Platform {
	if c.GatewayArch == "x86_64" {
		return awsecrassets.Platform_LINUX_AMD64()
	}
	return awsecrassets.Platform_LINUX_ARM64()
}

package executorobject

import (
	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/yamldoc"
)

// Parse reads one Executor document. It returns the object as far as it
// could be read, with the defaults filled in (a rollout's snapshot then
// says what its calls do), and every issue: first those of reading, then
// those of Validate. An object whose issues hold an error must not be used.
//
//	apiVersion: myriarch.dev/v1alpha1
//	kind: Executor
//	metadata: {name: edge-hook}
//	spec:
//	  type: webhook
//	  webhook: {url: "https://deploy.example.com/myriarch", secretRef: edge-hook}
func Parse(data []byte) (Object, issue.List) {
	d := &decoder{aliases: yamldoc.Refuse()}
	var o Object
	root := d.document(data)
	if root == nil {
		return o, d.issues
	}
	d.object(root, &o)
	o = o.WithDefaults()
	issues := d.issues
	for _, v := range Validate(o) {
		if !d.readFailed(v.Path) {
			issues = append(issues, v)
		}
	}
	return o, issues
}

// readFailed reports whether path is at or inside a value that could not
// be read.
func (d *decoder) readFailed(path string) bool {
	for _, f := range d.failed {
		if within(path, f) {
			return true
		}
	}
	return false
}

func (d *decoder) object(root *yaml.Node, o *Object) {
	var apiVersion, kind string
	var hasAPIVersion, hasKind bool
	d.mapping(root, "", keys{
		"apiVersion": func(v *yaml.Node, p string) { apiVersion, hasAPIVersion = d.str(v, p) },
		"kind":       func(v *yaml.Node, p string) { kind, hasKind = d.str(v, p) },
		"metadata": func(v *yaml.Node, p string) {
			d.mapping(v, p, keys{"name": func(v *yaml.Node, p string) { o.Name, _ = d.str(v, p) }})
		},
		"spec": func(v *yaml.Node, p string) { d.spec(v, p, o) },
	})
	switch {
	case !hasAPIVersion && !d.readFailed("apiVersion"):
		d.issues.Errorf(CodeAPIVersionInvalid, "apiVersion", "apiVersion is missing; write apiVersion: %s", APIVersion)
	case hasAPIVersion && apiVersion != APIVersion:
		d.issues.Errorf(CodeAPIVersionInvalid, "apiVersion", "apiVersion %q is not supported; write apiVersion: %s", issue.Clip(apiVersion), APIVersion)
	}
	switch {
	case !hasKind && !d.readFailed("kind"):
		d.issues.Errorf(CodeKindInvalid, "kind", "kind is missing; write kind: %s", ObjectKind)
	case hasKind && kind != ObjectKind:
		d.issues.Errorf(CodeKindInvalid, "kind", "kind %q is not an executor object; write kind: %s", issue.Clip(kind), ObjectKind)
	}
}

func (d *decoder) spec(n *yaml.Node, path string, o *Object) {
	d.mapping(n, path, keys{
		"type": func(v *yaml.Node, p string) { o.Type, _ = d.nonEmpty(v, p) },
		"webhook": func(v *yaml.Node, p string) {
			o.Webhook = &Webhook{}
			d.webhook(v, p, o.Webhook)
		},
		"awx": func(v *yaml.Node, p string) {
			o.AWX = &AWX{}
			d.awx(v, p, o.AWX)
		},
	})
}

func (d *decoder) webhook(n *yaml.Node, path string, w *Webhook) {
	d.mapping(n, path, keys{
		"url":       func(v *yaml.Node, p string) { w.URL, _ = d.str(v, p) },
		"method":    func(v *yaml.Node, p string) { w.Method, _ = d.nonEmpty(v, p) },
		"headers":   func(v *yaml.Node, p string) { w.Headers = d.stringMap(v, p) },
		"timeout":   func(v *yaml.Node, p string) { w.Timeout, _ = d.duration(v, p) },
		"retryFor":  func(v *yaml.Node, p string) { w.RetryFor, _ = d.duration(v, p) },
		"secretRef": func(v *yaml.Node, p string) { w.SecretRef, _ = d.str(v, p) },
		"cancel":    func(v *yaml.Node, p string) { w.Cancel, _ = d.boolean(v, p) },
		"cancelUrl": func(v *yaml.Node, p string) { w.CancelURL, _ = d.nonEmpty(v, p) },
	})
}

func (d *decoder) awx(n *yaml.Node, path string, a *AWX) {
	d.mapping(n, path, keys{
		"url":           func(v *yaml.Node, p string) { a.URL, _ = d.str(v, p) },
		"jobTemplateId": func(v *yaml.Node, p string) { a.JobTemplateID, _ = d.integer(v, p) },
		"credentialRef": func(v *yaml.Node, p string) { a.CredentialRef, _ = d.str(v, p) },
		"credentials":   func(v *yaml.Node, p string) { a.Credentials = d.intList(v, p) },
		"extraVars": func(v *yaml.Node, p string) {
			a.ExtraVars = map[string]any{}
			d.entries(v, p, func(key string, v *yaml.Node, p string) { a.ExtraVars[key] = d.value(v, p) })
		},
		"limit":         func(v *yaml.Node, p string) { a.Limit, _ = d.nonEmpty(v, p) },
		"hostAttribute": func(v *yaml.Node, p string) { a.HostAttribute, _ = d.nonEmpty(v, p) },
		"timeout":       func(v *yaml.Node, p string) { a.Timeout, _ = d.duration(v, p) },
		"retryFor":      func(v *yaml.Node, p string) { a.RetryFor, _ = d.duration(v, p) },
	})
}

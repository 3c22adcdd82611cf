package executorobject

import (
	"maps"
	"net"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
)

// Issue codes of an executor object. They are stable: docs/executors.md
// lists each with what causes it.
const (
	CodeYAMLInvalid       = "yaml_invalid"        // not YAML, not one mapping, a key set twice, merge keys
	CodeYAMLTagInvalid    = issue.CodeYAMLTag     // an explicit tag (!!binary, !!int, !custom), the rule of every object
	CodeAPIVersionInvalid = "api_version_invalid" // apiVersion missing or not myriarch.dev/v1alpha1
	CodeKindInvalid       = "kind_invalid"        // kind missing or not Executor
	CodeNameInvalid       = "name_invalid"        // metadata.name missing or not a name
	CodeUnknownField      = "unknown_field"       // a key the object does not have, at any level
	CodeTypeInvalid       = "type_invalid"        // a wrong YAML type (a list for a string, 10 for "10s")
	// CodeInvalid: a value the executor cannot work with (a URL that is not
	// http(s), a method other than POST or PUT, a missing secretRef, a
	// reserved header, a duration out of range, jobTemplateId below 1 ...).
	CodeInvalid = "executor_object_invalid"
)

// Codes lists every code, for documentation and tests.
var Codes = []string{CodeYAMLInvalid, CodeAPIVersionInvalid, CodeKindInvalid, CodeNameInvalid, CodeUnknownField, CodeTypeInvalid, CodeInvalid}

// Bounds of the durations. A call is made while the engine's task runs (a
// Lambda of a few minutes): a request that takes longer than MaxTimeout to
// be accepted, or retries beyond MaxRetryFor, would outlast it.
const (
	MaxTimeout  = time.Minute
	MaxRetryFor = 10 * time.Minute
)

// MaxSecretRefLength bounds a secret's name (Secrets Manager allows 512
// characters with the deployment's prefix).
const MaxSecretRefLength = 256

// secretRefPattern: the characters Secrets Manager allows in a name, in
// segments separated by '/'. The local directory source reads the name as a
// path below its directory, so "." and ".." segments are refused too.
var secretRefPattern = regexp.MustCompile(`^[A-Za-z0-9_+=.@-]+(/[A-Za-z0-9_+=.@-]+)*$`)

// ReservedHeaders are set by the webhook executor; an object may not set
// them, nor secrets (Authorization), which belong in the signing secret.
var ReservedHeaders = []string{"Authorization", "Proxy-Authorization", "Content-Type", "Content-Length", "Host", "User-Agent", "Transfer-Encoding"}

// ReservedHeaderPrefix is the prefix of the headers the executor signs with.
const ReservedHeaderPrefix = "X-Myriarch-"

// Validate applies the rules of an executor object (after WithDefaults: a
// zero timeout is an error here). Paths are the object's fields.
func Validate(o Object) issue.List {
	var l issue.List
	switch {
	case o.Name == "":
		l.Errorf(CodeNameInvalid, "metadata.name", "metadata.name is required: the name a fleet's update.executorRef gives")
	case !fleet.ValidName(o.Name):
		l.Errorf(CodeNameInvalid, "metadata.name", "executor name %q must be at most %d lowercase letters, digits and '-', starting and ending with a letter or digit", issue.Clip(o.Name), fleet.MaxNameLength)
	}
	switch o.Type {
	case TypeWebhook:
		validateWebhook(&l, o.Webhook)
	case TypeAWX:
		validateAWX(&l, o.AWX)
	case "":
		l.Errorf(CodeInvalid, "spec.type", "spec.type is required: webhook or awx")
	default:
		l.Errorf(CodeInvalid, "spec.type", "spec.type %q is not an executor type; use webhook or awx", issue.Clip(o.Type))
	}
	if o.Type != TypeWebhook && o.Webhook != nil {
		l.Errorf(CodeInvalid, "spec.webhook", "spec.webhook belongs to type webhook; this object is of type %q", issue.Clip(o.Type))
	}
	if o.Type != TypeAWX && o.AWX != nil {
		l.Errorf(CodeInvalid, "spec.awx", "spec.awx belongs to type awx; this object is of type %q", issue.Clip(o.Type))
	}
	return l
}

func validateWebhook(l *issue.List, w *Webhook) {
	const at = "spec.webhook"
	if w == nil {
		l.Errorf(CodeInvalid, at, "type webhook needs spec.webhook with at least url and secretRef")
		return
	}
	validateURL(l, at+".url", w.URL, "the receiver")
	if w.Method != "POST" && w.Method != "PUT" {
		l.Errorf(CodeInvalid, at+".method", "method %q is not POST or PUT (upper case)", issue.Clip(w.Method))
	}
	validateHeaders(l, at+".headers", w.Headers)
	validateDurations(l, at, w.Timeout, w.RetryFor)
	validateSecretRef(l, at+".secretRef", w.SecretRef, "the secret that signs the requests")
	switch {
	case w.Cancel && w.CancelURL != "":
		validateURL(l, at+".cancelUrl", w.CancelURL, "the receiver of cancels")
	case !w.Cancel && w.CancelURL != "":
		l.Warnf(CodeInvalid, at+".cancelUrl", "cancelUrl is ignored while cancel is false: no cancel is sent")
	}
}

func validateAWX(l *issue.List, a *AWX) {
	const at = "spec.awx"
	if a == nil {
		l.Errorf(CodeInvalid, at, "type awx needs spec.awx with at least url, jobTemplateId and credentialRef")
		return
	}
	validateURL(l, at+".url", a.URL, "AWX (https://awx.example.com)")
	if a.JobTemplateID < 1 {
		l.Errorf(CodeInvalid, at+".jobTemplateId", "jobTemplateId must be the id of an AWX job template, 1 or more; got %d", a.JobTemplateID)
	}
	validateSecretRef(l, at+".credentialRef", a.CredentialRef, "the secret that holds the AWX token")
	for i, c := range a.Credentials {
		switch {
		case c < 1:
			l.Errorf(CodeInvalid, at+".credentials["+strconv.Itoa(i)+"]", "credentials[%d] must be an AWX credential id, 1 or more; got %d", i, c)
		case slices.Index(a.Credentials, c) < i:
			l.Errorf(CodeInvalid, at+".credentials["+strconv.Itoa(i)+"]", "credential %d is listed twice", c)
		}
	}
	if a.Limit == "" {
		l.Errorf(CodeInvalid, at+".limit", "limit is empty: a job without a limit runs on every host of the inventory")
	}
	if a.HostAttribute == "" {
		l.Errorf(CodeInvalid, at+".hostAttribute", "hostAttribute is empty; name the agent attribute that holds the host, e.g. host.name")
	}
	validateDurations(l, at, a.Timeout, a.RetryFor)
}

// validateURL: an absolute http or https URL with a host, without user
// information (a password in Git) or a fragment. Plain http is a warning
// beyond the loopback: the signature protects the body, not its secrecy.
func validateURL(l *issue.List, at, s, what string) {
	u, err := url.Parse(s)
	switch {
	case s == "":
		l.Errorf(CodeInvalid, at, "%s is required: the http(s) address of %s", at[strings.LastIndexByte(at, '.')+1:], what)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		l.Errorf(CodeInvalid, at, "%q is not an absolute http or https URL", issue.Clip(s))
	case u.User != nil:
		l.Errorf(CodeInvalid, at, "the URL carries user information: credentials do not belong in Git; use the secret reference")
	case u.Fragment != "":
		l.Errorf(CodeInvalid, at, "the URL has a fragment (#%s), which is never sent; remove it", issue.Clip(u.Fragment))
	case u.Scheme == "http" && !loopback(u.Hostname()):
		l.Warnf(CodeInvalid, at, "plain http to %s: anyone on the way reads the requests; use https", issue.Clip(u.Hostname()))
	}
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateHeaders: valid names and values, none the executor sets itself.
func validateHeaders(l *issue.List, at string, hs map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(hs)) {
		p := issue.Child(at, name)
		canonical := textproto.CanonicalMIMEHeaderKey(name)
		switch {
		case !validHeaderName(name):
			l.Errorf(CodeInvalid, p, "%q is not a valid header name (letters, digits and !#$%%&'*+-.^_`|~)", issue.Clip(name))
		case strings.HasPrefix(canonical, ReservedHeaderPrefix):
			l.Errorf(CodeInvalid, p, "headers starting with %s are the executor's (delivery, signature, event); choose another name", ReservedHeaderPrefix)
		case canonical == "Authorization" || canonical == "Proxy-Authorization":
			l.Errorf(CodeInvalid, p, "%s would put a credential in Git; the receiver checks the signature made with secretRef instead", canonical)
		case slices.Contains(ReservedHeaders, canonical):
			l.Errorf(CodeInvalid, p, "%s is set by the executor and cannot be changed", canonical)
		case strings.ContainsFunc(hs[name], func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }):
			l.Errorf(CodeInvalid, p, "the value of header %s holds a control character (a line break?)", canonical)
		}
	}
}

func validHeaderName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
	})
}

func validateDurations(l *issue.List, at string, timeout, retryFor time.Duration) {
	switch {
	case timeout <= 0:
		l.Errorf(CodeInvalid, at+".timeout", "timeout must be positive, got %s", timeout)
	case timeout > MaxTimeout:
		l.Errorf(CodeInvalid, at+".timeout", "timeout %s is longer than %s: a receiver should accept the call and do the work afterwards", timeout, MaxTimeout)
	}
	switch {
	case retryFor <= 0:
		l.Errorf(CodeInvalid, at+".retryFor", "retryFor must be positive, got %s", retryFor)
	case retryFor > MaxRetryFor:
		l.Errorf(CodeInvalid, at+".retryFor", "retryFor %s is longer than %s", retryFor, MaxRetryFor)
	}
}

// validateSecretRef: required, and a name every secret source can hold.
func validateSecretRef(l *issue.List, at, name, what string) {
	field := at[strings.LastIndexByte(at, '.')+1:]
	switch {
	case name == "":
		l.Errorf(CodeInvalid, at, "%s is required: the name of %s (never the secret itself)", field, what)
	case len(name) > MaxSecretRefLength || !ValidSecretRef(name):
		l.Errorf(CodeInvalid, at, "%s %q must be at most %d letters, digits and _+=.@- in segments separated by '/' (no '.' or '..' segment)", field, issue.Clip(name), MaxSecretRefLength)
	}
}

// ValidSecretRef reports whether name can name a secret in every source:
// Secrets Manager's characters, and a relative path below a directory.
func ValidSecretRef(name string) bool {
	if !secretRefPattern.MatchString(name) {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

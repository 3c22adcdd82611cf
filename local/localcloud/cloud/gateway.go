package cloud

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// container is the one container of an ECS task definition as the local
// cloud runs it: a process of the gateway binary with the container's
// Environment and Secrets, the task role's credentials, and each container
// port mapped to a free loopback port (awsvpc gives the task an address of
// its own; here the ports of one machine must not collide).
type container struct {
	Env   map[string]string
	Ports map[int]int // container port → loopback port
	Role  string      // the task role's logical id
	// ExecutionRole fetches the container's secrets (ECS's agent does, with
	// this role, before the container starts); Secrets are their ARNs.
	ExecutionRole string
	Secrets       []string
}

// containerOf reads the task definition: a variable whose value is an
// address ":<container port>" gets 127.0.0.1:<mapped port>.
func containerOf(t *cfn.Template, id string, secrets *secrets) (container, error) {
	p := cfn.Props(t.Resources[id].Properties)
	defs := asList(p["ContainerDefinitions"])
	if len(defs) != 1 {
		return container{}, fmt.Errorf("task definition %s: %d containers; the local cloud runs one", id, len(defs))
	}
	def := defs[0]
	c := container{Env: map[string]string{}, Ports: map[int]int{}}
	for _, pm := range asList(def["PortMappings"]) {
		cp := int(pm.Num("ContainerPort", 0))
		port, err := freePort()
		if err != nil {
			return container{}, err
		}
		c.Ports[cp] = port
	}
	for _, e := range asList(def["Environment"]) {
		name, value := e.Str("Name"), e.Str("Value")
		if cp, err := strconv.Atoi(strings.TrimPrefix(value, ":")); err == nil && strings.HasPrefix(value, ":") {
			port, ok := c.Ports[cp]
			if !ok {
				return container{}, fmt.Errorf("task definition %s: %s=%s listens on a port the container does not map", id, name, value)
			}
			value = fmt.Sprintf("127.0.0.1:%d", port)
		}
		c.Env[name] = value
	}
	for _, s := range asList(def["Secrets"]) {
		name, from := s.Str("Name"), s.Str("ValueFrom")
		v, ok := secrets.lookup(from)
		if !ok {
			return container{}, fmt.Errorf("task definition %s: secret %s from %s: no such secret", id, name, from)
		}
		c.Env[name] = v.value
		c.Secrets = append(c.Secrets, v.arn)
	}
	roleArn := p.Str("TaskRoleArn")
	role, ok := t.LogicalIDOf(roleArn)
	if !ok {
		return container{}, fmt.Errorf("task definition %s: task role %q is not a role of the template", id, roleArn)
	}
	c.Role = role
	c.ExecutionRole = p.Str("ExecutionRoleArn")
	return c, nil
}

// command is the gateway process: env only from the container and the
// cloud's base (region, endpoint, credentials), nothing inherited.
func (c container) command(binary string, base map[string]string, logDir string) (*exec.Cmd, *os.File, error) {
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	for k, v := range c.Env {
		env[k] = v
	}
	env["AWS_ACCESS_KEY_ID"] = c.Role
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cmd := exec.Command(binary)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	log, err := os.Create(filepath.Join(logDir, "gateway.log"))
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	return cmd, log, nil
}

func asList(v any) []cfn.Props {
	var out []cfn.Props
	l, _ := v.([]any)
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

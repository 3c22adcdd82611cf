package awx

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
)

// vars are the templates of a call's limit and extra vars: {version},
// {from}, {agent}, {host}, {fleet}, {rollout}, {attempt} and {operation}.
// A value is substituted once: a host named "{version}" stays literal.
type vars struct {
	r        *strings.Replacer
	host     string
	hostAttr string
	agentID  string
}

func newVars(o executorobject.AWX, c executor.Call) vars {
	attr := cmp.Or(o.HostAttribute, DefaultHostAttribute)
	host := c.Agent.Attributes[attr]
	return vars{
		r: strings.NewReplacer(
			"{version}", c.Version,
			"{from}", c.Target.FromRef,
			"{agent}", c.Target.AgentID,
			"{host}", host,
			"{fleet}", c.Rollout.Fleet,
			"{rollout}", c.Rollout.ID,
			"{attempt}", strconv.Itoa(c.Target.Attempt),
			"{operation}", c.Operation,
		),
		host: host, hostAttr: attr, agentID: c.Target.AgentID,
	}
}

// render substitutes a template. {host} of an agent without the host
// attribute is an error: the job would run on another host, or on none.
func (v vars) render(s string) (string, error) {
	if v.host == "" && strings.Contains(s, "{host}") {
		return "", fmt.Errorf("agent %s reports no %s attribute, which {host} needs (awx.hostAttribute)", v.agentID, v.hostAttr)
	}
	return v.r.Replace(s), nil
}

// renderValue substitutes the strings of an extra var, at any depth of its
// maps and lists; other values are sent as they are.
func (v vars) renderValue(val any) (any, error) {
	switch x := val.(type) {
	case string:
		return v.render(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := v.renderValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := v.renderValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return val, nil
}

package policy

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/windows"
	"github.com/myriarch/myriarch/core/yamldoc"
)

// Parse reads one RolloutPolicy YAML document. It returns the policy as far
// as it could be read and every issue: first those of reading, then those of
// Validate. A policy whose issues contain an error must not be used.
func Parse(data []byte) (Policy, issue.List) {
	d := newDecoder()
	var p Policy
	root := d.document(data)
	if root == nil {
		return p, d.issues
	}
	d.policy(root, &p)
	return p, append(d.issues, unrelated(Validate(p), d.issues)...)
}

// document returns the root mapping of the only document in data. A
// trailing "---" with nothing after it is no second document.
func (d *decoder) document(data []byte) *yaml.Node {
	doc, err := yamldoc.Read(data, yamldoc.Rule{Aliases: d.aliases, Trailing: yamldoc.AllowEmpty})
	d.issues = append(d.issues, doc.Tags...)
	var syntax *yamldoc.SyntaxError
	var second *yamldoc.SecondError
	switch {
	case errors.As(err, &syntax):
		d.issues.Errorf(CodeYAMLInvalid, "", "not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	case errors.As(err, &second):
		d.issues.Errorf(CodeYAMLInvalid, "", "the file holds more than one YAML document (---); write one RolloutPolicy per file")
	case errors.Is(err, yamldoc.ErrEmpty):
		d.issues.Errorf(CodeYAMLInvalid, "", "the document is empty; a RolloutPolicy needs apiVersion, kind, metadata and spec")
	case errors.Is(err, yamldoc.ErrUnresolved):
		d.issues.Errorf(CodeYAMLInvalid, "", "the alias here cannot be resolved")
	case errors.Is(err, yamldoc.ErrNotMapping):
		d.issues.Errorf(CodeYAMLInvalid, "", "a RolloutPolicy is a mapping with apiVersion, kind, metadata and spec; this document is %s", describe(doc.Root))
	case err == nil:
		return doc.Root
	}
	return nil
}

func (d *decoder) policy(root *yaml.Node, p *Policy) {
	var hasAPIVersion, hasKind bool
	d.object(root, "", "", fields{
		"apiVersion": func(v *yaml.Node, path string) {
			hasAPIVersion = true
			if s, ok := d.str(v, path); ok && s != APIVersion {
				d.issues.Errorf(CodeAPIVersionInvalid, path, "apiVersion %s is not supported; write apiVersion: %s", quote(s), APIVersion)
			}
		},
		"kind": func(v *yaml.Node, path string) {
			hasKind = true
			if s, ok := d.str(v, path); ok && s != ObjectKind {
				d.issues.Errorf(CodeKindInvalid, path, "kind %s is not a rollout policy; write kind: %s", quote(s), ObjectKind)
			}
		},
		"metadata": func(v *yaml.Node, path string) {
			d.object(v, path, "", fields{
				"name": func(v *yaml.Node, path string) { p.Name, _ = d.str(v, path) },
			})
		},
		"spec": func(v *yaml.Node, path string) { d.spec(v, path, &p.Spec) },
	})
	if !hasAPIVersion {
		d.issues.Errorf(CodeAPIVersionInvalid, "apiVersion", "apiVersion is missing; write apiVersion: %s", APIVersion)
	}
	if !hasKind {
		d.issues.Errorf(CodeKindInvalid, "kind", "kind is missing; write kind: %s", ObjectKind)
	}
}

func (d *decoder) spec(n *yaml.Node, path string, s *Spec) {
	fs := fields{
		"waves": func(v *yaml.Node, path string) {
			s.Waves = []Wave{}
			d.list(v, path, "", func(item *yaml.Node, p string) { s.Waves = append(s.Waves, d.wave(item, p)) })
		},
		"maxConcurrent": func(v *yaml.Node, path string) {
			if n, ok := d.integer(v, path); ok {
				s.MaxConcurrent = &n
			}
		},
		"healthWait":         func(v *yaml.Node, path string) { s.HealthWait, _ = d.duration(v, path) },
		"applyTimeout":       func(v *yaml.Node, path string) { s.ApplyTimeout, _ = d.duration(v, path) },
		"offlineGracePeriod": func(v *yaml.Node, path string) { s.OfflineGracePeriod, _ = d.duration(v, path) },
		"failureThreshold": func(v *yaml.Node, path string) {
			d.object(v, path, "", fields{
				"maxFailed":        func(v *yaml.Node, path string) { s.FailureThreshold.MaxFailed, _ = d.integer(v, path) },
				"maxFailedPercent": func(v *yaml.Node, path string) { s.FailureThreshold.MaxFailedPercent, _ = d.integer(v, path) },
			})
		},
		"onFailure": func(v *yaml.Node, path string) {
			if v, ok := d.nonEmpty(v, path, CodeValueInvalid, "use pause (the default), stop, rollback, rollback-wave or rollback-all"); ok {
				s.OnFailure = OnFailure(v)
			}
		},
		"timezoneAttribute": func(v *yaml.Node, path string) {
			s.TimezoneAttribute, _ = d.nonEmpty(v, path, CodeValueInvalid, "name the agent attribute that holds the time zone, e.g. site.timezone (the default)")
		},
		"defaultTimezone": func(v *yaml.Node, path string) {
			s.DefaultTimezone, _ = d.nonEmpty(v, path, CodeTimezoneInvalid, `write an IANA zone such as "Europe/Berlin" or "UTC"`)
		},
		"topology": func(v *yaml.Node, path string) {
			d.object(v, path, "", fields{
				"regionAttribute": func(v *yaml.Node, path string) {
					s.Topology.RegionAttribute, _ = d.nonEmpty(v, path, CodeTopologyInvalid, "name the agent attribute that holds the region, e.g. cloud.region (the default)")
				},
				"zoneAttribute": func(v *yaml.Node, path string) {
					s.Topology.ZoneAttribute, _ = d.nonEmpty(v, path, CodeTopologyInvalid, "name the agent attribute that holds the zone, e.g. cloud.availability_zone (the default)")
				},
				"hostAttribute": func(v *yaml.Node, path string) {
					s.Topology.HostAttribute, _ = d.nonEmpty(v, path, CodeTopologyInvalid, "name the agent attribute that holds the host probes reach, e.g. host.name (the default)")
				},
			})
		},
		"regions": func(v *yaml.Node, path string) {
			s.Regions = []string{}
			d.list(v, path, "write e.g. regions: [eu-west-1, us-east-1]", func(item *yaml.Node, p string) {
				// An unreadable item stays in the list as "", so that the
				// indexes of Validate's paths stay those of the document.
				r, _ := d.str(item, p)
				s.Regions = append(s.Regions, r)
			})
		},
		"maxUnavailable": func(v *yaml.Node, path string) { s.MaxUnavailable = d.amount(v, path) },
		"maintenanceWindows": func(v *yaml.Node, path string) {
			s.MaintenanceWindows = []windows.Window{}
			d.list(v, path, "", func(item *yaml.Node, p string) {
				s.MaintenanceWindows = append(s.MaintenanceWindows, d.window(item, p))
			})
		},
	}
	for k, f := range d.gateFields(s) {
		fs[k] = f
	}
	d.object(n, path, "", fs)
}

// nonEmpty reads a string that, when written, must not be empty: in Spec an
// empty string means "not set", so an explicit "" would silently become the
// default.
func (d *decoder) nonEmpty(n *yaml.Node, path, code, hint string) (string, bool) {
	s, ok := d.str(n, path)
	if ok && s == "" {
		d.issues.Errorf(code, path, "%s is empty; %s, or remove the key for the default", path[strings.LastIndexByte(path, '.')+1:], hint)
		return "", false
	}
	return s, ok
}

// wave decodes one wave. A wave that cannot be read is returned as the zero
// Wave, so that the indexes of Validate's paths stay those of the document.
func (d *decoder) wave(n *yaml.Node, path string) Wave {
	var w Wave
	d.object(n, path, "", fields{
		"name":     func(v *yaml.Node, path string) { w.Name, _ = d.str(v, path) },
		"selector": func(v *yaml.Node, path string) { w.Selector = d.selector(v, path) },
		"percent": func(v *yaml.Node, path string) {
			// In Wave, 0 means "no percent"; a written 0 must not read as that.
			if n, ok := d.integer(v, path); ok && n == 0 {
				d.issues.Errorf(CodeWaveInvalid, path, "percent must be from 1 to 100, got 0")
			} else {
				w.Percent = n
			}
		},
		"requireApproval": func(v *yaml.Node, path string) { w.RequireApproval, _ = d.boolean(v, path) },
		"by": func(v *yaml.Node, path string) {
			if s, ok := d.nonEmpty(v, path, CodeTopologyInvalid, "use region or zone"); ok {
				w.By = Split(s)
			}
		},
		"parallelRegions": func(v *yaml.Node, path string) {
			// In Wave, 0 means "not set"; a written 0 must not read as that.
			if n, ok := d.integer(v, path); ok && n == 0 {
				d.issues.Errorf(CodeTopologyInvalid, path, "parallelRegions must be 1 or more, got 0")
			} else {
				w.ParallelRegions = n
			}
		},
		"bake":           func(v *yaml.Node, path string) { w.Bake, _ = d.duration(v, path) },
		"maxUnavailable": func(v *yaml.Node, path string) { w.MaxUnavailable = d.amount(v, path) },
		"batchBake": func(v *yaml.Node, path string) {
			w.BatchBake, w.BatchGate = d.duration(v, path)
		},
	})
	return w
}

// amount reads maxUnavailable: an integer, or a string with a percent sign.
// A written 0 is refused here, because the zero Amount means "not set".
func (d *decoder) amount(n *yaml.Node, path string) Amount {
	const example = `write a number of targets such as 2, or a percentage of the pass such as "25%"`
	if n = d.scalar(n, path, "a number or a percentage", example); n == nil {
		return Amount{}
	}
	var a Amount
	switch n.ShortTag() {
	case "!!int":
		v, ok := d.integer(n, path)
		if !ok {
			return Amount{}
		}
		a = Amount{Value: v}
	case "!!str":
		v, err := ParseAmount(n.Value)
		if err != nil || !strings.HasSuffix(strings.TrimSpace(n.Value), "%") {
			d.issues.Errorf(CodeMaxUnavailableInvalid, path, "invalid maxUnavailable %s; %s", quote(n.Value), example)
			return Amount{}
		}
		a = v
	default:
		d.typeError(path, "a number or a percentage", n, example)
		return Amount{}
	}
	if a.Value == 0 {
		d.issues.Errorf(CodeMaxUnavailableInvalid, path, "maxUnavailable must be at least 1 or 1%%, got %s", a)
		return Amount{}
	}
	return a
}

// selector reads the mapping form (matchAttributes, matchConditions) or the
// string form, which is matchConditions alone: selector: "canary=true".
func (d *decoder) selector(n *yaml.Node, path string) *selector.Selector {
	sel := &selector.Selector{}
	if isString(n) {
		cs, ok := d.conditions(n, path)
		if !ok {
			return nil
		}
		sel.MatchConditions = cs
		return sel
	}
	ok := d.object(n, path, `a selector lists the attributes under matchAttributes, e.g. selector: {matchAttributes: {labels.wave: canary}}, or is a string of conditions, e.g. selector: "labels.wave=canary"`, fields{
		"matchAttributes": func(v *yaml.Node, path string) { sel.MatchAttributes = d.attributes(v, path) },
		"matchConditions": func(v *yaml.Node, path string) { sel.MatchConditions, _ = d.conditions(v, path) },
	})
	if !ok {
		return nil
	}
	return sel
}

// isString reports whether n, through its aliases, is a string; it spends
// nothing of the budget, as the decoder that reads n next will.
func isString(n *yaml.Node) bool {
	n = yamldoc.Target(n)
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// conditions reads a string of conditions: "cloud.region=eu-1, canary!=true".
func (d *decoder) conditions(n *yaml.Node, path string) (selector.Conditions, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return nil, false
	}
	cs, err := selector.ParseConditions(s)
	if err != nil {
		d.issues.Errorf(CodeSelectorInvalid, path, "%s; conditions are key=value, key!=value, key in (a, b) or key notin (a, b), separated by commas", err)
		return nil, false
	}
	return cs, true
}

// attributes reads matchAttributes. Attribute values are strings, so a plain
// scalar such as 12 or true is taken as written ("12", "true").
func (d *decoder) attributes(n *yaml.Node, path string) map[string]string {
	attrs := map[string]string{}
	if n = d.resolve(n, path); n == nil {
		return attrs
	}
	if n.Kind != yaml.MappingNode {
		d.typeError(path, "a mapping of attribute names to values", n, "e.g. matchAttributes: {labels.wave: canary}")
		return attrs
	}
	d.entries(n, path, func(key string, v *yaml.Node, p string) {
		if v = d.scalar(v, p, "an attribute value", ""); v == nil {
			return
		}
		switch v.ShortTag() {
		case "!!str", "!!int", "!!float", "!!bool":
			attrs[key] = v.Value
		default:
			d.typeError(p, "an attribute value", v, `write the value, quoted if needed ("")`)
		}
	})
	return attrs
}

// window decodes one maintenance window; start and end are required, since
// a missing one would silently mean 00:00.
func (d *decoder) window(n *yaml.Node, path string) windows.Window {
	var w windows.Window
	var hasStart, hasEnd bool
	ok := d.object(n, path, "", fields{
		"days": func(v *yaml.Node, path string) {
			d.list(v, path, "write e.g. days: [Mon, Tue, Wed]", func(item *yaml.Node, p string) {
				if s, ok := d.str(item, p); ok {
					day, err := windows.ParseWeekday(s)
					if err != nil {
						d.issues.Errorf(CodeWindowInvalid, p, "unknown weekday %s; use Mon, Tue, Wed, Thu, Fri, Sat or Sun", quote(s))
						return
					}
					w.Days = append(w.Days, day)
				}
			})
		},
		"start": func(v *yaml.Node, path string) { hasStart = true; w.Start = d.timeOfDay(v, path) },
		"end":   func(v *yaml.Node, path string) { hasEnd = true; w.End = d.timeOfDay(v, path) },
		"timezone": func(v *yaml.Node, path string) {
			w.Timezone, _ = d.nonEmpty(v, path, CodeTimezoneInvalid, `write an IANA zone such as "Europe/Berlin", or agent for the agent's zone`)
		},
	})
	if ok && !hasStart {
		d.issues.Errorf(CodeWindowInvalid, path+".start", `start is missing; every window needs start and end as "HH:MM", e.g. start: "22:00"`)
	}
	if ok && !hasEnd {
		d.issues.Errorf(CodeWindowInvalid, path+".end", `end is missing; every window needs start and end as "HH:MM", e.g. end: "05:00"`)
	}
	return w
}

func (d *decoder) timeOfDay(n *yaml.Node, path string) windows.TimeOfDay {
	if n = d.scalar(n, path, `a time "HH:MM"`, ""); n == nil {
		return 0
	}
	if n.ShortTag() != "!!str" {
		d.typeError(path, `a time "HH:MM"`, n, `write e.g. "22:00"`)
		return 0
	}
	t, err := windows.ParseTimeOfDay(n.Value)
	if err != nil {
		d.issues.Errorf(CodeWindowInvalid, path, "invalid %s", err)
		return 0
	}
	return t
}

// unrelated drops the issues of Validate that concern a value whose reading
// already failed: a wave whose percent was "10%" need not also be told that
// it has neither selector nor percent. Two paths are related when one is the
// other or contains it.
func unrelated(validated, read issue.List) issue.List {
	var out issue.List
	for _, v := range validated {
		related := false
		for _, r := range read {
			if r.Path != "" && (within(v.Path, r.Path) || within(r.Path, v.Path)) {
				related = true
				break
			}
		}
		if !related {
			out = append(out, v)
		}
	}
	return out
}

// within reports whether path is outer or inside it: spec.waves[1].percent
// is within spec.waves[1], but spec.waves[10] is not.
func within(path, outer string) bool {
	if !strings.HasPrefix(path, outer) {
		return false
	}
	rest := path[len(outer):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

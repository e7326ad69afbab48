package engine

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Concurrency is a concurrency key (a workflow's or a job's): its group,
// as written (expressions unevaluated), and cancel-in-progress.
type Concurrency struct {
	Group            string
	CancelInProgress bool
}

// concurrencyOf reads a concurrency key: a group string, or a mapping of
// group: and cancel-in-progress: (zero for none).
func concurrencyOf(n yaml.Node) (Concurrency, error) {
	switch n.Kind {
	case 0:
		return Concurrency{}, nil
	case yaml.ScalarNode:
		return Concurrency{Group: n.Value}, nil
	case yaml.MappingNode:
		var c Concurrency
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch n.Content[i].Value {
			case "group":
				c.Group = n.Content[i+1].Value
			case "cancel-in-progress":
				c.CancelInProgress = n.Content[i+1].Value == "true"
			}
		}
		if c.Group == "" {
			return Concurrency{}, fmt.Errorf("concurrency needs a group")
		}
		return c, nil
	}
	return Concurrency{}, fmt.Errorf("concurrency is a group or {group, cancel-in-progress}")
}

// jobConcurrency reads each job's concurrency: (act ignores the key), by
// job key; a job without one is left out.
func jobConcurrency(content []byte) (map[string]Concurrency, error) {
	var doc struct {
		Jobs map[string]struct {
			Concurrency yaml.Node `yaml:"concurrency"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(content, &doc); err != nil {
		return nil, err
	}
	out := map[string]Concurrency{}
	for key, j := range doc.Jobs {
		c, err := concurrencyOf(j.Concurrency)
		if err != nil {
			return nil, fmt.Errorf("the job %q: %w", key, err)
		}
		if c.Group != "" {
			out[key] = c
		}
	}
	return out, nil
}

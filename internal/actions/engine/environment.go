package engine

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// environments reads each job's environment: (act ignores the key): the
// environment's name, written as a name or as {name, url}, by job key.
// A job without one is left out; an expression is kept as written.
func environments(content []byte) (map[string]string, error) {
	var doc struct {
		Jobs map[string]struct {
			Environment yaml.Node `yaml:"environment"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(content, &doc); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for key, j := range doc.Jobs {
		switch n := j.Environment; n.Kind {
		case 0:
		case yaml.ScalarNode:
			out[key] = n.Value
		case yaml.MappingNode:
			var env struct{ Name string }
			if err := n.Decode(&env); err != nil || env.Name == "" {
				return nil, fmt.Errorf("the job %q: environment needs a name", key)
			}
			out[key] = env.Name
		default:
			return nil, fmt.Errorf("the job %q: environment is a name or {name, url}", key)
		}
	}
	return out, nil
}

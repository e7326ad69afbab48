package issues

import (
	"bytes"
	"encoding/json"
	"slices"
)

// nullable is a JSON field that may be absent (Set false), null (Value
// nil) or a value.
type nullable[T any] struct {
	Set   bool
	Value *T
}

// UnmarshalJSON records that the field was present.
func (n *nullable[T]) UnmarshalJSON(b []byte) error {
	n.Set = true
	if bytes.Equal(b, []byte("null")) {
		n.Value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	n.Value = &v
	return nil
}

// labelRef is a label in a request: its name, or an object with a name.
type labelRef string

// UnmarshalJSON reads "name" or {"name": "name"}.
func (l *labelRef) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = labelRef(s)
		return nil
	}
	var o struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*l = labelRef(o.Name)
	return nil
}

func slicesContains(list []string, v string) bool { return slices.Contains(list, v) }

// rawLabels is a body of label names: a list, or {"labels": list}, of
// names or {"name": ...} objects.
type rawLabels []string

// UnmarshalJSON reads either form.
func (l *rawLabels) UnmarshalJSON(b []byte) error {
	var refs []labelRef
	if err := json.Unmarshal(b, &refs); err != nil {
		var o struct {
			Labels []labelRef `json:"labels"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		refs = o.Labels
	}
	*l = make(rawLabels, 0, len(refs))
	for _, r := range refs {
		*l = append(*l, string(r))
	}
	return nil
}

package customprops

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"forgeapi/internal/apierr"
)

// The value types of a property.
const (
	TypeString       = "string"
	TypeSingleSelect = "single_select"
	TypeMultiSelect  = "multi_select"
	TypeTrueFalse    = "true_false"
)

// Who may set a property's values.
const (
	EditableByOrg     = "org_actors"
	EditableByOrgRepo = "org_and_repo_actors"
)

// The platform's limits.
const (
	MaxDefinitions   = 100 // per organization
	MaxAllowedValues = 200 // per property
	MaxNameLength    = 75  // of a name, an allowed value and a string value
	MaxBulkRepos     = 30  // repositories of one organization values write
	resource         = "CustomProperty"
	valueResource    = "CustomPropertyValue"
)

// nameRE is what a property's name may hold.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_\-$#]+$`)

// Value is a property's value: one string, or a list of strings (a
// multi_select's). It is JSON a string or an array.
type Value struct {
	Multi bool
	Items []string
}

// MarshalJSON implements json.Marshaler.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.Multi {
		return json.Marshal(v.Items)
	}
	if len(v.Items) == 0 {
		return []byte(`""`), nil
	}
	return json.Marshal(v.Items[0])
}

// parseValue reads a JSON value: null is nil; a string or an array of
// strings is a Value; anything else is not ok.
func parseValue(raw json.RawMessage) (*Value, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &Value{Items: []string{s}}, true
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return &Value{Multi: true, Items: list}, true
	}
	return nil, false
}

// encode is a Value's stored form (JSON), or nil.
func encode(v *Value) any {
	if v == nil {
		return nil
	}
	b, _ := v.MarshalJSON()
	return string(b)
}

// decode reads a stored value.
func decode(s *string) *Value {
	if s == nil {
		return nil
	}
	v, _ := parseValue(json.RawMessage(*s))
	return v
}

// printable reports whether s holds only printable ASCII other than '"',
// what a value may hold.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' {
			return false
		}
	}
	return true
}

// Property is an organization's custom property definition.
type Property struct {
	ID          int64
	OrgID       int64
	Name        string
	ValueType   string
	Required    bool
	Default     *Value
	Description *string
	Allowed     []string // nil for none
	EditableBy  string
}

// definitionRequest is a definition as PUT .../schema/{name} and PATCH
// .../schema take it (the latter with property_name).
type definitionRequest struct {
	PropertyName     *string         `json:"property_name"`
	ValueType        *string         `json:"value_type"`
	Required         *bool           `json:"required"`
	DefaultValue     json.RawMessage `json:"default_value"`
	Description      *string         `json:"description"`
	AllowedValues    json.RawMessage `json:"allowed_values"`
	ValuesEditableBy *string         `json:"values_editable_by"`
}

// property validates the request as the definition named name; field
// errors go to f (prefix names the field's place in a bulk request).
func (b *definitionRequest) property(name, prefix string, f *apierr.Fields) Property {
	p := Property{Name: name, EditableBy: EditableByOrg, Description: b.Description}
	if name == "" {
		f.Add(resource, prefix+"property_name", apierr.CodeMissingField)
	} else if len(name) > MaxNameLength || !nameRE.MatchString(name) {
		f.Add(resource, prefix+"property_name", apierr.CodeInvalid)
	}
	switch {
	case b.ValueType == nil:
		f.Add(resource, prefix+"value_type", apierr.CodeMissingField)
	case !slices.Contains([]string{TypeString, TypeSingleSelect, TypeMultiSelect, TypeTrueFalse}, *b.ValueType):
		f.Add(resource, prefix+"value_type", apierr.CodeInvalid)
	default:
		p.ValueType = *b.ValueType
	}
	if b.Required != nil {
		p.Required = *b.Required
	}
	if b.ValuesEditableBy != nil {
		if *b.ValuesEditableBy != EditableByOrg && *b.ValuesEditableBy != EditableByOrgRepo {
			f.Add(resource, prefix+"values_editable_by", apierr.CodeInvalid)
		}
		p.EditableBy = *b.ValuesEditableBy
	}
	p.Allowed = b.allowed(p.ValueType, prefix, f)
	def, ok := parseValue(b.DefaultValue)
	if !ok {
		f.Add(resource, prefix+"default_value", apierr.CodeInvalid)
	}
	p.Default = def
	if p.ValueType != "" && def != nil {
		if msg := p.check(*def); msg != "" {
			f.Addf(resource, prefix+"default_value", "%s", "Default value "+msg)
		}
	}
	if p.Required && def == nil {
		f.Addf(resource, prefix+"default_value", "%s", "Required properties must have a default value")
	}
	return p
}

// allowed validates allowed_values for the value type: a list of 1 to
// MaxAllowedValues distinct values for the select types, none for the
// others.
func (b *definitionRequest) allowed(valueType, prefix string, f *apierr.Fields) []string {
	raw := bytes.TrimSpace(b.AllowedValues)
	isSelect := valueType == TypeSingleSelect || valueType == TypeMultiSelect
	if len(raw) == 0 || string(raw) == "null" {
		if isSelect {
			f.Addf(resource, prefix+"allowed_values", "%s", "Allowed values are required for "+valueType+" properties")
		}
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		f.Add(resource, prefix+"allowed_values", apierr.CodeInvalid)
		return nil
	}
	switch {
	case !isSelect && valueType != "" && len(list) > 0:
		f.Addf(resource, prefix+"allowed_values", "%s", "Allowed values are only allowed for single_select and multi_select properties")
		return nil
	case !isSelect:
		return nil
	case len(list) == 0:
		f.Addf(resource, prefix+"allowed_values", "%s", "Allowed values are required for "+valueType+" properties")
	case len(list) > MaxAllowedValues:
		f.Addf(resource, prefix+"allowed_values", "Allowed values may hold at most %d values", MaxAllowedValues)
	}
	seen := map[string]bool{}
	for _, v := range list {
		if v == "" || len(v) > MaxNameLength || !printable(v) || seen[strings.ToLower(v)] {
			f.Add(resource, prefix+"allowed_values", apierr.CodeInvalid)
			break
		}
		seen[strings.ToLower(v)] = true
	}
	return list
}

// check validates a value for the property: "" when it fits, else what
// is wrong.
func (p *Property) check(v Value) string {
	switch p.ValueType {
	case TypeMultiSelect:
		if !v.Multi {
			return "must be a list of values for a multi_select property"
		}
		for _, item := range v.Items {
			if !slices.Contains(p.Allowed, item) {
				return "'" + item + "' is not one of the allowed values"
			}
		}
		return ""
	case TypeSingleSelect:
		if v.Multi || len(v.Items) != 1 || !slices.Contains(p.Allowed, v.Items[0]) {
			return "must be one of the allowed values"
		}
	case TypeTrueFalse:
		if v.Multi || len(v.Items) != 1 || v.Items[0] != "true" && v.Items[0] != "false" {
			return "must be 'true' or 'false'"
		}
	default:
		if v.Multi || len(v.Items) != 1 || len(v.Items[0]) > MaxNameLength || !printable(v.Items[0]) {
			return "must be a string of printable characters other than '\"', at most 75 of them"
		}
	}
	return ""
}

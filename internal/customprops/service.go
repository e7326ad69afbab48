package customprops

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service keeps organizations' custom property definitions and their
// repositories' values, with the custom_property and
// custom_property_values webhook events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
}

const propertyColumns = `id, org_id, name, value_type, required, default_value, description, allowed_values, values_editable_by`

func scanProperty(s store.Scanner) (*Property, error) {
	var p Property
	var def, allowed *string
	if err := s.Scan(&p.ID, &p.OrgID, &p.Name, &p.ValueType, &p.Required, &def, &p.Description, &allowed, &p.EditableBy); err != nil {
		return nil, store.Normalize(err)
	}
	p.Default = decode(def)
	if allowed != nil {
		_ = json.Unmarshal([]byte(*allowed), &p.Allowed)
	}
	return &p, nil
}

// Definitions are the organization's properties, in the order they were
// made.
func Definitions(ctx context.Context, q store.Q, orgID int64) ([]*Property, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+propertyColumns+` FROM custom_properties WHERE org_id = $1 ORDER BY id`, orgID)
	return store.ScanAll(rows, err, scanProperty)
}

// Definition is the organization's property with the name (any case), or
// store.ErrNotFound.
func Definition(ctx context.Context, q store.Q, orgID int64, name string) (*Property, error) {
	return scanProperty(q.QueryRowContext(ctx, `SELECT `+propertyColumns+` FROM custom_properties
		WHERE org_id = $1 AND lower(name) = lower($2)`, orgID, name))
}

// Upsert creates or replaces the properties (each validated already) of
// the organization in one transaction: custom_property created or
// updated for each. Values that the new definition no longer allows are
// dropped. More than MaxDefinitions properties is a 422.
func (s *Service) Upsert(ctx context.Context, org, actor *accounts.Account, props []Property) ([]*Property, error) {
	var out []*Property
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		out = out[:0]
		for _, p := range props {
			saved, err := s.upsert(ctx, tx, org, actor, p)
			if err != nil {
				return err
			}
			out = append(out, saved)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM custom_properties WHERE org_id = $1`, org.ID).Scan(&n); err != nil {
			return store.Normalize(err)
		}
		if n > MaxDefinitions {
			return apierr.Unprocessable("An organization can have at most %d custom properties.", MaxDefinitions)
		}
		return nil
	})
	return out, err
}

func (s *Service) upsert(ctx context.Context, tx *store.Tx, org, actor *accounts.Account, p Property) (*Property, error) {
	var allowed any
	if p.Allowed != nil {
		b, _ := json.Marshal(p.Allowed)
		allowed = string(b)
	}
	cur, err := Definition(ctx, tx, org.ID, p.Name)
	action := "updated"
	switch {
	case errors.Is(err, store.ErrNotFound):
		action = "created"
		err = tx.QueryRowContext(ctx, `INSERT INTO custom_properties (org_id, name, value_type, required, default_value,
			description, allowed_values, values_editable_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			org.ID, p.Name, p.ValueType, p.Required, encode(p.Default), p.Description, allowed, p.EditableBy).Scan(&p.ID)
	case err == nil:
		p.ID = cur.ID
		_, err = tx.ExecContext(ctx, `UPDATE custom_properties SET name = $1, value_type = $2, required = $3,
			default_value = $4, description = $5, allowed_values = $6, values_editable_by = $7 WHERE id = $8`,
			p.Name, p.ValueType, p.Required, encode(p.Default), p.Description, allowed, p.EditableBy, p.ID)
	}
	if err != nil {
		return nil, store.Normalize(err)
	}
	p.OrgID = org.ID
	if action == "updated" {
		if err := dropInvalid(ctx, tx, &p); err != nil {
			return nil, err
		}
	}
	def := toDefinitionJSON(httpapi.BaseURL(ctx), org, &p)
	return &p, s.Events.Emit(ctx, tx, &events.Event{HookEvent: "custom_property", Actor: actor, Org: org,
		HookPayload: map[string]any{"action": action, "definition": def}})
}

// dropInvalid deletes the property's values that it does not allow any
// more (a changed type or allowed values).
func dropInvalid(ctx context.Context, tx *store.Tx, p *Property) error {
	rows, err := tx.QueryContext(ctx, `SELECT repository_id, value FROM custom_property_values WHERE property_id = $1`, p.ID)
	type stored struct {
		repoID int64
		value  string
	}
	list, err := store.ScanAll(rows, err, func(s store.Scanner) (stored, error) {
		var v stored
		return v, s.Scan(&v.repoID, &v.value)
	})
	if err != nil {
		return err
	}
	for _, v := range list {
		val := decode(&v.value)
		if val != nil && p.check(*val) == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM custom_property_values WHERE repository_id = $1 AND property_id = $2`,
			v.repoID, p.ID); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// Delete deletes the organization's property and its values
// (custom_property deleted); store.ErrNotFound when there is none.
func (s *Service) Delete(ctx context.Context, org, actor *accounts.Account, name string) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := Definition(ctx, tx, org.ID, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM custom_properties WHERE id = $1`, p.ID); err != nil {
			return store.Normalize(err)
		}
		return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "custom_property", Actor: actor, Org: org,
			HookPayload: map[string]any{"action": "deleted", "definition": map[string]any{"property_name": p.Name}}})
	})
}

// PropertyValue is one property's value of a repository.
type PropertyValue struct {
	Name  string `json:"property_name"`
	Value *Value `json:"value"`
}

// RepoValues are the repository's property values, in the order of the
// definitions: those set, and the defaults of the required properties it
// has no value of. A repository of a user has none.
func RepoValues(ctx context.Context, q store.Q, repo *repos.Repository) ([]PropertyValue, error) {
	out := []PropertyValue{}
	if !repo.Owner.IsOrg() {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT p.name, p.required, p.default_value, v.value FROM custom_properties p
		LEFT JOIN custom_property_values v ON v.property_id = p.id AND v.repository_id = $2
		WHERE p.org_id = $1 ORDER BY p.id`, repo.Owner.ID, repo.ID)
	list, err := store.ScanAll(rows, err, func(s store.Scanner) (PropertyValue, error) {
		var pv PropertyValue
		var required bool
		var def, val *string
		err := s.Scan(&pv.Name, &required, &def, &val)
		switch {
		case val != nil:
			pv.Value = decode(val)
		case required:
			pv.Value = decode(def)
		}
		return pv, err
	})
	if err != nil {
		return nil, err
	}
	for _, pv := range list {
		if pv.Value != nil {
			out = append(out, pv)
		}
	}
	return out, nil
}

// ValueInput is a value to set: Value nil unsets it.
type ValueInput struct {
	Name  string
	Value *Value
}

// SetValues sets the values on each repository of the organization in
// one transaction (custom_property_values updated for each repository
// whose values change). A property that does not exist, a value it does
// not allow and unsetting a required property are a 422; with repoActor
// (a repository admin who is not an organization owner), a property
// whose values only the organization edits is a 403.
func (s *Service) SetValues(ctx context.Context, org *accounts.Account, targets []*repos.Repository, actor *accounts.Account,
	in []ValueInput, repoActor bool) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		props, err := checkInputs(ctx, tx, org, in, repoActor)
		if err != nil {
			return err
		}
		for _, repo := range targets {
			if err := s.setRepo(ctx, tx, org, repo, actor, props, in); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkInputs resolves and validates the inputs against the
// organization's definitions.
func checkInputs(ctx context.Context, q store.Q, org *accounts.Account, in []ValueInput, repoActor bool) ([]*Property, error) {
	var f apierr.Fields
	props := make([]*Property, len(in))
	for i, v := range in {
		p, err := Definition(ctx, q, org.ID, v.Name)
		if errors.Is(err, store.ErrNotFound) {
			f.Addf(valueResource, "property_name", "Property '%s' does not exist in the organization", v.Name)
			continue
		}
		if err != nil {
			return nil, err
		}
		props[i] = p
		switch {
		case v.Value == nil && p.Required:
			f.Addf(valueResource, "value", "Property '%s' is required and cannot be unset", p.Name)
		case v.Value != nil:
			if msg := p.check(*v.Value); msg != "" {
				f.Addf(valueResource, "value", "Value of '%s' %s", p.Name, msg)
			}
		}
		if repoActor && p.EditableBy != EditableByOrgRepo {
			return nil, apierr.Forbidden("You do not have permission to edit the value of the custom property '%s' on this repository.", p.Name)
		}
	}
	return props, f.Err()
}

// setRepo applies the inputs to one repository.
func (s *Service) setRepo(ctx context.Context, tx *store.Tx, org *accounts.Account, repo *repos.Repository, actor *accounts.Account,
	props []*Property, in []ValueInput) error {
	before, err := RepoValues(ctx, tx, repo)
	if err != nil {
		return err
	}
	for i, v := range in {
		var err error
		if v.Value == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM custom_property_values WHERE repository_id = $1 AND property_id = $2`,
				repo.ID, props[i].ID)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO custom_property_values (repository_id, property_id, value) VALUES ($1, $2, $3)
				ON CONFLICT (repository_id, property_id) DO UPDATE SET value = excluded.value`, repo.ID, props[i].ID, encode(v.Value))
		}
		if err != nil {
			return store.Normalize(err)
		}
	}
	after, err := RepoValues(ctx, tx, repo)
	if err != nil {
		return err
	}
	changedNew, changedOld := changes(before, after)
	if len(changedNew) == 0 {
		return nil
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "custom_property_values", Actor: actor, Org: org, Repo: repo,
		HookPayload: map[string]any{"action": "updated", "new_property_values": changedNew, "old_property_values": changedOld}})
}

// changes are the values that differ between before and after: their
// new values (null when unset) and their old ones.
func changes(before, after []PropertyValue) (newValues, oldValues []PropertyValue) {
	index := func(list []PropertyValue) map[string]*Value {
		m := map[string]*Value{}
		for _, pv := range list {
			m[pv.Name] = pv.Value
		}
		return m
	}
	b, a := index(before), index(after)
	seen := map[string]bool{}
	for _, list := range [][]PropertyValue{after, before} {
		for _, pv := range list {
			if seen[pv.Name] {
				continue
			}
			seen[pv.Name] = true
			if same(b[pv.Name], a[pv.Name]) {
				continue
			}
			newValues = append(newValues, PropertyValue{Name: pv.Name, Value: a[pv.Name]})
			oldValues = append(oldValues, PropertyValue{Name: pv.Name, Value: b[pv.Name]})
		}
	}
	return newValues, oldValues
}

func same(x, y *Value) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x.Multi == y.Multi && strings.Join(x.Items, "\x00") == strings.Join(y.Items, "\x00") && len(x.Items) == len(y.Items)
}

// definitionJSON is the platform's custom-property object.
type definitionJSON struct {
	PropertyName     string   `json:"property_name"`
	URL              string   `json:"url"`
	SourceType       string   `json:"source_type"`
	ValueType        string   `json:"value_type"`
	Required         bool     `json:"required"`
	DefaultValue     *Value   `json:"default_value"`
	Description      *string  `json:"description"`
	AllowedValues    []string `json:"allowed_values"`
	ValuesEditableBy string   `json:"values_editable_by"`
}

func toDefinitionJSON(base string, org *accounts.Account, p *Property) definitionJSON {
	return definitionJSON{PropertyName: p.Name, URL: base + "/orgs/" + org.Login + "/properties/schema/" + url.PathEscape(p.Name),
		SourceType: "organization", ValueType: p.ValueType, Required: p.Required, DefaultValue: p.Default,
		Description: p.Description, AllowedValues: p.Allowed, ValuesEditableBy: p.EditableBy}
}

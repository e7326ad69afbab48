package rulesets

import (
	"slices"

	"forgeapi/internal/apierr"
)

// Input is the body of POST and PUT /orgs/{org}/rulesets[/{ruleset_id}]:
// the fields given replace the ruleset's.
type Input struct {
	Name         *string        `json:"name"`
	Target       *string        `json:"target"`
	Enforcement  *string        `json:"enforcement"`
	BypassActors *[]BypassActor `json:"bypass_actors"`
	Conditions   *Conditions    `json:"conditions"`
	Rules        *[]Rule        `json:"rules"`
}

// apply sets the given fields on the ruleset.
func (in *Input) apply(rs *Ruleset) {
	set(&rs.Name, in.Name)
	set(&rs.Target, in.Target)
	set(&rs.Enforcement, in.Enforcement)
	set(&rs.BypassActors, in.BypassActors)
	set(&rs.Conditions, in.Conditions)
	set(&rs.Rules, in.Rules)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// maxNameLength bounds a ruleset's name.
const maxNameLength = 100

// validate checks the ruleset as it would be stored and normalises it
// (defaults, empty lists): a 422 names the first field at fault.
func validate(rs *Ruleset) error {
	if rs.Name == "" {
		return apierr.Invalid("Ruleset", "name", apierr.CodeMissingField)
	}
	if apierr.TooLongFor(rs.Name, maxNameLength) {
		return apierr.Validation(apierr.TooLong("Ruleset", "name", maxNameLength))
	}
	if !slices.Contains([]string{TargetBranch, TargetTag, TargetPush}, rs.Target) {
		return apierr.Custom("Ruleset", "target", "Invalid target: %q (forgeapi serves branch, tag and push rulesets)", rs.Target)
	}
	if !slices.Contains([]string{EnforcementDisabled, EnforcementActive, EnforcementEvaluate}, rs.Enforcement) {
		return apierr.Custom("Ruleset", "enforcement", "Invalid enforcement: %q", rs.Enforcement)
	}
	if err := validateConditions(rs); err != nil {
		return err
	}
	if err := validateActors(rs.BypassActors); err != nil {
		return err
	}
	return validateRules(rs)
}

func validateConditions(rs *Ruleset) error {
	c := &rs.Conditions
	if rs.RepoID != 0 {
		c.RepositoryName = nil // a repository ruleset selects its repository
	} else if c.RepositoryName == nil {
		return apierr.Custom("Ruleset", "conditions", "Conditions must name repositories with repository_name")
	}
	if c.RepositoryName != nil {
		normalize(&c.RepositoryName.Patterns)
	}
	if rs.Target == TargetPush {
		c.RefName = nil
		return nil
	}
	if c.RefName == nil {
		return apierr.Custom("Ruleset", "conditions", "Conditions of a %s ruleset must include ref_name", rs.Target)
	}
	normalize(c.RefName)
	return nil
}

func normalize(p *Patterns) {
	if p.Include == nil {
		p.Include = []string{}
	}
	if p.Exclude == nil {
		p.Exclude = []string{}
	}
}

func validateActors(actors []BypassActor) error {
	for i := range actors {
		a := &actors[i]
		if a.BypassMode == "" {
			a.BypassMode = "always"
		}
		if !slices.Contains([]string{"always", "pull_request", "exempt"}, a.BypassMode) {
			return apierr.Custom("Ruleset", "bypass_actors", "Invalid bypass mode: %q", a.BypassMode)
		}
		switch a.ActorType {
		case "OrganizationAdmin":
			one := int64(1)
			a.ActorID = &one
		case "RepositoryRole":
			if a.ActorID == nil || repositoryRoles[*a.ActorID] == 0 {
				return apierr.Custom("Ruleset", "bypass_actors", "RepositoryRole actor_id must be 2 (maintain), 4 (write) or 5 (admin)")
			}
		case "Integration", "User", "Team":
			if a.ActorID == nil {
				return apierr.Custom("Ruleset", "bypass_actors", "%s bypass actors need an actor_id", a.ActorType)
			}
		default:
			return apierr.Custom("Ruleset", "bypass_actors", "Invalid actor type: %q (forgeapi serves OrganizationAdmin, RepositoryRole, Integration, Team and User)", a.ActorType)
		}
	}
	return nil
}

func validateRules(rs *Ruleset) error {
	allowed := refRules
	if rs.Target == TargetPush {
		allowed = pushRules
	}
	for i := range rs.Rules {
		r := &rs.Rules[i]
		if !slices.Contains(allowed, r.Type) {
			return apierr.Custom("Ruleset", "rules", "Invalid rule %q for a %s ruleset (forgeapi enforces %v)", r.Type, rs.Target, allowed)
		}
		if err := r.normalize(); err != nil {
			return err
		}
	}
	return nil
}

// normalize keeps the rule's own parameters and checks them.
func (r *Rule) normalize() error {
	p := r.Parameters
	if p == nil {
		p = &Parameters{}
	}
	switch r.Type {
	case "update":
		r.Parameters = &Parameters{UpdateAllowsFetchAndMerge: p.UpdateAllowsFetchAndMerge}
		if r.Parameters.UpdateAllowsFetchAndMerge == nil {
			r.Parameters.UpdateAllowsFetchAndMerge = new(false)
		}
	case "file_path_restriction":
		r.Parameters = &Parameters{RestrictedFilePaths: p.RestrictedFilePaths}
		if len(p.RestrictedFilePaths) == 0 {
			return apierr.Custom("Ruleset", "rules", "file_path_restriction needs restricted_file_paths")
		}
	case "file_extension_restriction":
		r.Parameters = &Parameters{RestrictedFileExtensions: p.RestrictedFileExtensions}
		if len(p.RestrictedFileExtensions) == 0 {
			return apierr.Custom("Ruleset", "rules", "file_extension_restriction needs restricted_file_extensions")
		}
	case "max_file_size":
		r.Parameters = &Parameters{MaxFileSize: p.MaxFileSize}
		if p.MaxFileSize < 1 || p.MaxFileSize > 100 {
			return apierr.Custom("Ruleset", "rules", "max_file_size must be between 1 and 100 (megabytes)")
		}
	default:
		r.Parameters = nil
	}
	return nil
}

package orgs

import (
	"forgeapi/internal/accounts"
	"forgeapi/internal/wire"
)

// membershipJSON is the platform's org-membership object.
type membershipJSON struct {
	URL             string               `json:"url"`
	State           string               `json:"state"`
	Role            string               `json:"role"`
	OrganizationURL string               `json:"organization_url"`
	Organization    accounts.SimpleOrg   `json:"organization"`
	User            *accounts.SimpleUser `json:"user"`
	Permissions     membershipPerms      `json:"permissions"`
}

type membershipPerms struct {
	CanCreateRepository bool `json:"can_create_repository"`
}

// apiRole is the platform's name of a membership role: admin for owners.
func apiRole(role string) string {
	if role == accounts.RoleOwner {
		return "admin"
	}
	return "member"
}

func toMembershipJSON(base string, m *Membership) membershipJSON {
	user := accounts.ToSimpleUser(base, m.User)
	org := base + "/orgs/" + m.Org.Login
	return membershipJSON{
		URL: org + "/memberships/" + m.User.Login, State: m.State, Role: apiRole(m.Role),
		OrganizationURL: org, Organization: accounts.ToSimpleOrg(base, m.Org), User: &user,
		Permissions: membershipPerms{CanCreateRepository: m.State == StateActive},
	}
}

// invitationJSON is the platform's organization-invitation object.
type invitationJSON struct {
	ID                 int64                `json:"id"`
	Login              string               `json:"login"`
	Email              *string              `json:"email"`
	Role               string               `json:"role"`
	CreatedAt          wire.Time            `json:"created_at"`
	FailedAt           *wire.Time           `json:"failed_at"`
	FailedReason       *string              `json:"failed_reason"`
	Inviter            *accounts.SimpleUser `json:"inviter"`
	TeamCount          int                  `json:"team_count"`
	NodeID             string               `json:"node_id"`
	InvitationTeamsURL string               `json:"invitation_teams_url"`
	InvitationSource   string               `json:"invitation_source"`
}

// invitationRoles are the platform's invitation roles of membership roles.
func invitationRole(role string) string {
	if role == accounts.RoleOwner {
		return "admin"
	}
	return "direct_member"
}

func toInvitationJSON(base string, m *Membership) invitationJSON {
	inv := invitationJSON{
		ID: m.InvitationID, Login: m.User.Login, Role: invitationRole(m.Role), CreatedAt: wire.T(m.CreatedAt),
		NodeID:             wire.NodeID("OrganizationInvitation", m.InvitationID),
		InvitationTeamsURL: base + "/organizations/" + wire.Itoa(m.Org.ID) + "/invitations/" + wire.Itoa(m.InvitationID) + "/teams",
		InvitationSource:   "member",
	}
	if m.Inviter != nil {
		su := accounts.ToSimpleUser(base, m.Inviter)
		inv.Inviter = &su
	}
	return inv
}

package artifacts

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// createDeploymentRecord serves POST /orgs/{org}/artifacts/metadata/deployment-record:
// it creates the record or updates the one with the same identity.
func (h *Handler) createDeploymentRecord(w http.ResponseWriter, r *http.Request) error {
	var body deploymentRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	d, err := body.toDeployment()
	if err != nil {
		return err
	}
	ctx, org, p := r.Context(), accounts.OrgFrom(r.Context()), auth.PrincipalFrom(r.Context())
	var records []DeploymentRecord
	err = h.DB.Tx(ctx, func(tx *store.Tx) error {
		records, _, err = recordDeployments(ctx, tx, h.DB.Dialect, p, org, []Deployment{d}, batch{})
		return err
	})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toDeploymentRecordsJSON(records, returnRecords(body.ReturnRecords)))
	return nil
}

// setClusterDeploymentRecords serves POST
// /orgs/{org}/artifacts/metadata/deployment-record/cluster/{cluster}: up to
// 1000 deployments recorded in one transaction. With partial_success the
// deployments whose repository cannot be used are left out and reported
// in errors with a 207.
func (h *Handler) setClusterDeploymentRecords(w http.ResponseWriter, r *http.Request) error {
	var body clusterRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ds, err := body.toDeployments(r.PathValue("cluster"))
	if err != nil {
		return err
	}
	ctx, org, p := r.Context(), accounts.OrgFrom(r.Context()), auth.PrincipalFrom(r.Context())
	var records []DeploymentRecord
	var failures []Failure
	err = h.DB.Tx(ctx, func(tx *store.Tx) error {
		records, failures, err = recordDeployments(ctx, tx, h.DB.Dialect, p, org, ds, batch{Partial: body.PartialSuccess, Indexed: true})
		return err
	})
	if err != nil {
		return err
	}
	out := toDeploymentRecordsJSON(records, returnRecords(body.ReturnRecords))
	status := http.StatusOK
	if len(failures) > 0 {
		status = http.StatusMultiStatus
		for _, f := range failures {
			out.Errors = append(out.Errors, toFailureJSON(f))
		}
	}
	httpapi.WriteJSON(w, status, out)
	return nil
}

// listDeploymentRecords serves GET
// /orgs/{org}/artifacts/{subject_digest}/metadata/deployment-records: every
// deployment record of the digest in the organization.
func (h *Handler) listDeploymentRecords(w http.ResponseWriter, r *http.Request) error {
	digest, err := subjectDigest(r)
	if err != nil {
		return err
	}
	records, err := listDeploymentRecords(r.Context(), h.DB, accounts.OrgFrom(r.Context()).ID, digest)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toDeploymentRecordsJSON(records, true))
	return nil
}

// subjectDigest reads the {subject_digest} path parameter: a digest of the
// form <algorithm>:<hex> (sha256:<64 hex> for the platform's artifacts).
func subjectDigest(r *http.Request) (string, error) {
	d := r.PathValue("subject_digest")
	if !validDigest(d) {
		return "", apierr.Validation(apierr.FieldError{Resource: "Artifact", Field: "subject_digest", Code: apierr.CodeInvalid,
			Message: "subject_digest must be <algorithm>:<lowercase hexadecimal digest>, such as sha256: and 64 hexadecimal digits"})
	}
	return d, nil
}

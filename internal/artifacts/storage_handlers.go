package artifacts

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// createStorageRecord serves POST /orgs/{org}/artifacts/metadata/storage-record.
func (h *Handler) createStorageRecord(w http.ResponseWriter, r *http.Request) error {
	var body storageRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	s, err := body.toStorage()
	if err != nil {
		return err
	}
	ctx, org, p := r.Context(), accounts.OrgFrom(r.Context()), auth.PrincipalFrom(r.Context())
	var records []StorageRecord
	err = h.DB.Tx(ctx, func(tx *store.Tx) error {
		records, err = recordStorage(ctx, tx, h.DB.Dialect, p, org, s)
		return err
	})
	if err != nil {
		return err
	}
	out := storageRecordsCreatedJSON{TotalCount: len(records), StorageRecords: []storageRecordJSON{}}
	if returnRecords(body.ReturnRecords) {
		out.StorageRecords = toStorageRecordsJSON(records)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listStorageRecords serves GET
// /orgs/{org}/artifacts/{subject_digest}/metadata/storage-records: the
// storage records of the digest that the caller can read.
func (h *Handler) listStorageRecords(w http.ResponseWriter, r *http.Request) error {
	digest, err := subjectDigest(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	records, err := readableStorageRecords(ctx, h.DB, auth.PrincipalFrom(ctx), accounts.OrgFrom(ctx).ID, digest)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, storageRecordsJSON{StorageRecords: toStorageRecordsJSON(records)})
	return nil
}

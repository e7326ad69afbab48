package artifacts

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

// batchRows is how many rows one multi-row INSERT carries: 500 rows of
// 11 columns stay well under both databases' bound-parameter limits.
const batchRows = 500

// valuesList renders the VALUES rows of a multi-row INSERT whose only
// parameters they are: "($1, $2), ($3, $4)" on PostgreSQL and
// "(?, ?), (?, ?)" on SQLite. This is the one dialect-specific SQL of the
// package: SQLite looks $N parameters up by name, which makes binding
// thousands of them quadratic; anonymous ones bind by position.
func valuesList(d store.Dialect, rows, cols int) string {
	var b strings.Builder
	n := 1
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range cols {
			if j > 0 {
				b.WriteString(", ")
			}
			if d == store.SQLite {
				b.WriteByte('?')
			} else {
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
			}
			n++
		}
		b.WriteByte(')')
	}
	return b.String()
}

// inBatches calls fn with consecutive slices of at most batchRows items.
func inBatches[T any](items []T, fn func([]T) error) error {
	for len(items) > 0 {
		n := min(len(items), batchRows)
		if err := fn(items[:n]); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

// ensureArtifacts creates the artifacts that do not exist yet and returns
// every one of them, by key. An artifact that exists keeps its name and
// version: the first request (and within a request, the first item) that
// names an artifact sets them. Keys must be distinct.
func ensureArtifacts(ctx context.Context, q store.Q, d store.Dialect, orgID int64, arts []newArtifact, now time.Time) (map[artifactKey]artifact, error) {
	// A fixed row order makes concurrent batches lock rows in the same
	// order on PostgreSQL, so they cannot deadlock.
	arts = slices.SortedFunc(slices.Values(arts), func(a, b newArtifact) int {
		ka, kb := a.key(), b.key()
		return cmp.Or(cmp.Compare(ka.RepoID, kb.RepoID), strings.Compare(ka.Digest, kb.Digest))
	})
	out := make(map[artifactKey]artifact, len(arts))
	err := inBatches(arts, func(batch []newArtifact) error {
		args := make([]any, 0, len(batch)*8)
		for _, a := range batch {
			var repoID *int64
			if a.Repo != nil {
				repoID = &a.Repo.ID
			}
			args = append(args, orgID, repoID, a.key().RepoID, a.Digest, a.Name, a.Version, now, now)
		}
		rows, err := q.QueryContext(ctx, store.Dynamic+`
			INSERT INTO artifacts (org_id, repository_id, repo_key, digest, name, version, created_at, updated_at)
			VALUES `+valuesList(d, len(batch), 8)+`
			ON CONFLICT (org_id, repo_key, digest) DO UPDATE SET updated_at = excluded.updated_at
			RETURNING id, repo_key, digest, name, version`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a artifact
			if err := rows.Scan(&a.ID, &a.RepoID, &a.Digest, &a.Name, &a.Version); err != nil {
				return err
			}
			out[artifactKey{a.RepoID, a.Digest}] = a
		}
		return rows.Err()
	})
	return out, err
}

// recordKey is a deployment record's identity within its organization.
type recordKey struct {
	Logical, Physical, Cluster, DeploymentName string
}

func (d Deployment) key() recordKey {
	return recordKey{d.LogicalEnvironment, d.PhysicalEnvironment, d.Cluster, d.DeploymentName}
}

// savedRecord is what an upsert returns about a deployment record.
type savedRecord struct {
	ID        int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// recordRow is a deployment record to upsert: the deployment and its
// artifact's id.
type recordRow struct {
	Deployment
	ArtifactID int64
}

// upsertDeploymentRecords creates the records whose identity is new and
// updates the others (artifact, status, tags, runtime risks), returning
// each one's id and timestamps by identity. Identities must be distinct.
func upsertDeploymentRecords(ctx context.Context, q store.Q, d store.Dialect, orgID int64, recs []recordRow, now time.Time) (map[recordKey]savedRecord, error) {
	recs = slices.SortedFunc(slices.Values(recs), func(a, b recordRow) int {
		ka, kb := a.key(), b.key()
		return cmp.Or(strings.Compare(ka.Logical, kb.Logical), strings.Compare(ka.Physical, kb.Physical),
			strings.Compare(ka.Cluster, kb.Cluster), strings.Compare(ka.DeploymentName, kb.DeploymentName))
	})
	out := make(map[recordKey]savedRecord, len(recs))
	err := inBatches(recs, func(batch []recordRow) error {
		args := make([]any, 0, len(batch)*11)
		for _, r := range batch {
			tags, _ := json.Marshal(r.Tags)
			risks, _ := json.Marshal(r.RuntimeRisks)
			args = append(args, orgID, r.ArtifactID, r.LogicalEnvironment, r.PhysicalEnvironment, r.Cluster,
				r.DeploymentName, r.Status, string(tags), string(risks), now, now)
		}
		rows, err := q.QueryContext(ctx, store.Dynamic+`
			INSERT INTO deployment_records (org_id, artifact_id, logical_environment, physical_environment, cluster,
				deployment_name, status, tags, runtime_risks, created_at, updated_at)
			VALUES `+valuesList(d, len(batch), 11)+`
			ON CONFLICT (org_id, logical_environment, physical_environment, cluster, deployment_name) DO UPDATE SET
				artifact_id = excluded.artifact_id, status = excluded.status, tags = excluded.tags,
				runtime_risks = excluded.runtime_risks, updated_at = excluded.updated_at
			RETURNING id, logical_environment, physical_environment, cluster, deployment_name, created_at, updated_at`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k recordKey
			var s savedRecord
			if err := rows.Scan(&s.ID, &k.Logical, &k.Physical, &k.Cluster, &k.DeploymentName, &s.CreatedAt, &s.UpdatedAt); err != nil {
				return err
			}
			out[k] = s
		}
		return rows.Err()
	})
	return out, err
}

// listDeploymentRecords returns the organization's deployment records of
// artifacts with the digest, oldest first.
func listDeploymentRecords(ctx context.Context, q store.Q, orgID int64, digest string) ([]DeploymentRecord, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT d.id, a.name, a.version, a.digest, d.status, d.logical_environment, d.physical_environment, d.cluster,
			d.deployment_name, d.tags, d.runtime_risks, COALESCE(r.name, ''), d.attestation_id, d.created_at, d.updated_at
		FROM deployment_records d
		JOIN artifacts a ON a.id = d.artifact_id
		LEFT JOIN repositories r ON r.id = a.repository_id
		WHERE a.org_id = $1 AND a.digest = $2
		ORDER BY d.id`, orgID, digest)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DeploymentRecord
	for rows.Next() {
		var d DeploymentRecord
		var tags, risks string
		var attestation sql.NullInt64
		if err := rows.Scan(&d.ID, &d.ArtifactName, &d.ArtifactVersion, &d.Digest, &d.Status, &d.LogicalEnvironment,
			&d.PhysicalEnvironment, &d.Cluster, &d.DeploymentName, &tags, &risks, &d.RepositoryName, &attestation,
			&d.CreatedAt, &d.UpdatedAt); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(tags), &d.Tags); err != nil {
			return nil, fmt.Errorf("deployment record %d tags: %w", d.ID, err)
		}
		if err := json.Unmarshal([]byte(risks), &d.RuntimeRisks); err != nil {
			return nil, fmt.Errorf("deployment record %d runtime risks: %w", d.ID, err)
		}
		if attestation.Valid {
			d.AttestationID = &attestation.Int64
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// artifactsWithDigest returns the organization's artifacts with the
// digest, by repository.
func artifactsWithDigest(ctx context.Context, q store.Q, orgID int64, digest string) ([]artifact, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT id, repo_key, digest, name, version FROM artifacts
		WHERE org_id = $1 AND digest = $2 ORDER BY repo_key`, orgID, digest)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []artifact
	for rows.Next() {
		var a artifact
		if err := rows.Scan(&a.ID, &a.RepoID, &a.Digest, &a.Name, &a.Version); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// upsertStorageRecords records the storage on each of the artifacts:
// one record per artifact, registry and registry repository, a repeat
// updating name, version, URLs, path and status. It returns the records'
// ids by artifact id.
func upsertStorageRecords(ctx context.Context, q store.Q, d store.Dialect, artifactIDs []int64, s Storage, now time.Time) (map[int64]savedRecord, error) {
	ids := slices.Sorted(slices.Values(artifactIDs))
	out := make(map[int64]savedRecord, len(ids))
	err := inBatches(ids, func(batch []int64) error {
		args := make([]any, 0, len(batch)*11)
		for _, id := range batch {
			args = append(args, id, s.Name, s.Version, s.RegistryURL, s.Repository, s.ArtifactURL, s.Path, s.Status, now, now)
		}
		rows, err := q.QueryContext(ctx, store.Dynamic+`
			INSERT INTO storage_records (artifact_id, name, version, registry_url, repository, artifact_url, path, status,
				created_at, updated_at)
			VALUES `+valuesList(d, len(batch), 10)+`
			ON CONFLICT (artifact_id, registry_url, repository) DO UPDATE SET
				name = excluded.name, version = excluded.version, artifact_url = excluded.artifact_url,
				path = excluded.path, status = excluded.status, updated_at = excluded.updated_at
			RETURNING id, artifact_id, created_at, updated_at`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var artifactID int64
			var s savedRecord
			if err := rows.Scan(&s.ID, &artifactID, &s.CreatedAt, &s.UpdatedAt); err != nil {
				return err
			}
			out[artifactID] = s
		}
		return rows.Err()
	})
	return out, err
}

// listStorageRecords returns the storage records of the organization's
// artifacts with the digest, oldest first, with their repositories.
func listStorageRecords(ctx context.Context, q store.Q, orgID int64, digest string) ([]StorageRecord, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT s.id, s.name, s.version, a.digest, s.artifact_url, s.path, s.registry_url, s.repository, s.status,
			a.repo_key, COALESCE(r.name, ''), s.created_at, s.updated_at
		FROM storage_records s
		JOIN artifacts a ON a.id = s.artifact_id
		LEFT JOIN repositories r ON r.id = a.repository_id
		WHERE a.org_id = $1 AND a.digest = $2
		ORDER BY s.id`, orgID, digest)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StorageRecord
	for rows.Next() {
		var s StorageRecord
		if err := rows.Scan(&s.ID, &s.Name, &s.Version, &s.Digest, &s.ArtifactURL, &s.Path, &s.RegistryURL, &s.Repository,
			&s.Status, &s.RepositoryID, &s.RepositoryName, &s.CreatedAt, &s.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

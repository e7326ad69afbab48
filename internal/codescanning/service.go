package codescanning

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

var (
	shaPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)
	refPattern = regexp.MustCompile(`^refs/(heads|tags|pull)/.+$`)
)

// UploadRequest is the body of POST .../code-scanning/sarifs.
type UploadRequest struct {
	CommitSHA   string `json:"commit_sha"`
	Ref         string `json:"ref"`
	SARIF       string `json:"sarif"`
	CheckoutURI string `json:"checkout_uri"`
	StartedAt   string `json:"started_at"`
	ToolName    string `json:"tool_name"`
	Validate    bool   `json:"validate"`
}

// Upload checks and stores a SARIF upload for the Processor: 400 for a
// missing or malformed commit_sha, ref or sarif (not base64 of gzip), 413
// for a SARIF over the limits. With validate, the SARIF is parsed now and
// a file the processor would fail is a 400.
func (s *Service) Upload(ctx context.Context, repo *repos.Repository, req UploadRequest, uploader *accounts.Account) (*Upload, error) {
	switch {
	case !shaPattern.MatchString(req.CommitSHA):
		return nil, apierr.BadRequest("commit_sha must be a full commit SHA (40 hexadecimal characters).")
	case !refPattern.MatchString(req.Ref):
		return nil, apierr.BadRequest("ref must be a full reference: refs/heads/<branch>, refs/tags/<tag> or refs/pull/<number>/(merge|head).")
	case req.SARIF == "":
		return nil, apierr.BadRequest("sarif is required: the SARIF file gzip-compressed and Base64-encoded.")
	}
	data, err := decodeSARIF(req.SARIF)
	if errors.Is(err, errTooLarge) {
		return nil, apierr.TooLarge("The SARIF file is over the limits: %d MB compressed, %d MB uncompressed.", MaxGzipBytes>>20, MaxSARIFBytes>>20)
	}
	if err != nil {
		return nil, apierr.BadRequest("Invalid SARIF: %s.", err.Error())
	}
	if req.Validate {
		if _, err := parseSARIF(data, req.CheckoutURI, req.ToolName); err != nil {
			return nil, apierr.BadRequest("Invalid SARIF: %s.", err.Error())
		}
	}
	// The checkout URI is kept with the file: the processor needs it.
	stored, err := json.Marshal(storedSARIF{CheckoutURI: req.CheckoutURI, Log: data})
	if err != nil {
		return nil, err
	}
	u := &Upload{ID: wire.NewGUID(), RepoID: repo.ID, CommitSHA: req.CommitSHA, Ref: req.Ref, ToolName: req.ToolName,
		Status: "pending", UploaderID: &uploader.ID, CreatedAt: store.Now()}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := insertUpload(ctx, tx, u, stored); err != nil {
			return err
		}
		if s.wake != nil {
			tx.AfterCommit(s.wake)
		}
		return nil
	})
	return u, err
}

// storedSARIF is what an upload's sarif column holds.
type storedSARIF struct {
	CheckoutURI string          `json:"checkout_uri"`
	Log         json.RawMessage `json:"log"`
}

// Change is an update of an alert: dismissed with a reason (and a
// comment), or open again.
type Change struct {
	State            *string `json:"state"`
	DismissedReason  *string `json:"dismissed_reason"`
	DismissedComment *string `json:"dismissed_comment"`
}

func (c Change) validate() error {
	if c.State == nil {
		return apierr.BadRequest("state is required: open or dismissed.")
	}
	switch *c.State {
	case StateDismissed:
		if c.DismissedReason == nil || !dismissReasons[*c.DismissedReason] {
			return apierr.BadRequest("dismissed_reason is required to dismiss an alert: false positive, won't fix or used in tests.")
		}
	case StateOpen:
	default:
		return apierr.BadRequest("state must be open or dismissed.")
	}
	if c.DismissedComment != nil && apierr.TooLongFor(*c.DismissedComment, 280) {
		return apierr.BadRequest("dismissed_comment may have at most 280 characters.")
	}
	return nil
}

// Update dismisses or reopens the alert (code_scanning_alert
// closed_by_user or reopened_by_user in the change's transaction). A
// fixed alert cannot be dismissed (400); asking for the state an alert
// has changes nothing. An alert reopened is open or fixed as its
// analyses say.
func (s *Service) Update(ctx context.Context, repo *repos.Repository, number int64, c Change, actor *accounts.Account) (*Alert, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	var out *Alert
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		a, err := alertByNumber(ctx, tx, repo.ID, number)
		if err != nil {
			return err
		}
		out = a
		now := tx.Now()
		action := ""
		switch {
		case *c.State == StateDismissed && a.State == StateFixed:
			return apierr.BadRequest("A fixed alert cannot be dismissed.")
		case *c.State == StateDismissed && a.State == StateOpen:
			a.State, a.Dismissed, a.DismissedByID, a.DismissedAt = StateDismissed, true, &actor.ID, &now
			a.DismissedReason, a.DismissedComment, action = c.DismissedReason, c.DismissedComment, "closed_by_user"
		case *c.State == StateOpen && a.State == StateDismissed:
			open, err := isOpen(ctx, tx, a.ID)
			if err != nil {
				return err
			}
			a.State = StateFixed
			if open {
				a.State = StateOpen
			}
			a.Dismissed, a.DismissedByID, a.DismissedAt, a.DismissedReason, a.DismissedComment = false, nil, nil, nil, nil
			action = "reopened_by_user"
		default:
			return nil
		}
		a.UpdatedAt = now
		if err := writeState(ctx, tx, a); err != nil {
			return err
		}
		v := view{base: s.BaseURL, users: map[int64]*accounts.Account{actor.ID: actor}}
		return s.emit(ctx, tx, v, repo, a, action, "", "", actor)
	})
	return out, err
}

// emit sends code_scanning_alert with the action, the ref and commit
// that caused it ("" for a user's change).
func (s *Service) emit(ctx context.Context, tx *store.Tx, v view, repo *repos.Repository, a *Alert, action, ref, commit string,
	sender *accounts.Account) error {
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "code_scanning_alert", Repo: repo, Actor: sender,
		HookPayload: map[string]any{"action": action, "alert": v.alert(repo, a, false), "ref": ref, "commit_oid": commit}})
}

// DeleteAnalysis deletes the analysis, which must be the latest of its
// set (400 "Analysis specified is not deletable." otherwise); the last
// one of a set needs confirm (400 otherwise). It returns the analysis
// before it in the set (nil for none). Alerts follow their remaining
// analyses: those no analysis has any more are deleted.
func (s *Service) DeleteAnalysis(ctx context.Context, repo *repos.Repository, id int64, confirm bool) (*Analysis, error) {
	var prev *Analysis
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		an, err := analysisByID(ctx, tx, repo.ID, id)
		if err != nil {
			return err
		}
		if !an.Deletable {
			return apierr.BadRequest("Analysis specified is not deletable.")
		}
		if prev, err = previousInSet(ctx, tx, an); err != nil {
			return err
		}
		if prev == nil && !confirm {
			return apierr.BadRequest("Analysis is last of its type and deletion may result in the loss of historical alert data. Please specify confirm_delete.")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM code_scanning_analyses WHERE id = $1`, an.ID); err != nil {
			return store.Normalize(err)
		}
		_, _, err = settle(ctx, tx, repo.ID, an.ToolName, tx.Now())
		return err
	})
	return prev, err
}

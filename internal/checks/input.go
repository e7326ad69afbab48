package checks

import (
	"net/url"
	"slices"
	"strconv"
	"time"

	"forgeapi/internal/apierr"
)

// RunInput is the body of POST .../check-runs and PATCH
// .../check-runs/{id}: a field left out keeps its value.
type RunInput struct {
	Name        *string        `json:"name"`
	HeadSHA     *string        `json:"head_sha"`
	DetailsURL  *string        `json:"details_url"`
	ExternalID  *string        `json:"external_id"`
	Status      *string        `json:"status"`
	StartedAt   *string        `json:"started_at"`
	Conclusion  *string        `json:"conclusion"`
	CompletedAt *string        `json:"completed_at"`
	Output      *OutputInput   `json:"output"`
	Actions     *[]ActionInput `json:"actions"`
}

// OutputInput is a run's output as sent: title and summary are required
// with it; annotations are appended to the run's.
type OutputInput struct {
	Title       *string           `json:"title"`
	Summary     *string           `json:"summary"`
	Text        *string           `json:"text"`
	Annotations []AnnotationInput `json:"annotations"`
}

// AnnotationInput is one annotation as sent.
type AnnotationInput struct {
	Path            *string `json:"path"`
	StartLine       *int    `json:"start_line"`
	EndLine         *int    `json:"end_line"`
	StartColumn     *int    `json:"start_column"`
	EndColumn       *int    `json:"end_column"`
	AnnotationLevel *string `json:"annotation_level"`
	Message         *string `json:"message"`
	Title           *string `json:"title"`
	RawDetails      *string `json:"raw_details"`
}

// ActionInput is one action as sent.
type ActionInput struct {
	Label       *string `json:"label"`
	Description *string `json:"description"`
	Identifier  *string `json:"identifier"`
}

const runResource = "CheckRun"

// apply validates the input and applies it to r (a new run when create),
// returning the annotations to append. The platform's rules: a
// conclusion completes the run; a completed run needs a conclusion, and
// gets completed_at now unless sent; only Actions sets waiting,
// requested or pending; a run back to queued or in_progress loses its
// conclusion.
func (in RunInput) apply(r *Run, create bool, now time.Time) ([]Annotation, error) {
	var f apierr.Fields
	in.applyName(r, create, &f)
	if in.DetailsURL != nil {
		r.DetailsURL = *in.DetailsURL
		if r.DetailsURL != "" && f.MaxLength(runResource, "details_url", r.DetailsURL, MaxDetailsURLLength) {
			if u, err := url.Parse(r.DetailsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				f.Add(runResource, "details_url", apierr.CodeInvalid)
			}
		}
	}
	if in.ExternalID != nil {
		r.ExternalID = *in.ExternalID
		f.MaxLength(runResource, "external_id", r.ExternalID, MaxNameLength)
	}
	in.applyState(r, now, &f)
	annotations := in.applyOutput(r, &f)
	in.applyActions(r, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	r.AnnotationsCount += len(annotations)
	return annotations, nil
}

func (in RunInput) applyName(r *Run, create bool, f *apierr.Fields) {
	switch {
	case in.Name == nil && create:
		f.Add(runResource, "name", apierr.CodeMissingField)
	case in.Name == nil:
	case *in.Name == "":
		f.Add(runResource, "name", apierr.CodeInvalid)
	default:
		r.Name = *in.Name
		f.MaxLength(runResource, "name", r.Name, MaxNameLength)
	}
}

// applyState applies status, conclusion, started_at and completed_at.
func (in RunInput) applyState(r *Run, now time.Time, f *apierr.Fields) {
	if t, ok := parseTime(in.StartedAt, "started_at", f); ok {
		r.StartedAt = t
	}
	completedAt, completedAtOK := parseTime(in.CompletedAt, "completed_at", f)
	if in.Status != nil {
		switch {
		case slices.Contains(actionsOnlyStatuses, *in.Status):
			f.Addf(runResource, "status", "Only GitHub Actions can set a status of %s", *in.Status)
		case *in.Status != StatusQueued && *in.Status != StatusInProgress && *in.Status != StatusCompleted:
			f.Add(runResource, "status", apierr.CodeInvalid)
		default:
			r.Status = *in.Status
		}
	}
	if in.Conclusion != nil {
		if !slices.Contains(conclusions, *in.Conclusion) {
			f.Add(runResource, "conclusion", apierr.CodeInvalid)
		} else {
			c := *in.Conclusion
			r.Conclusion, r.Status = &c, StatusCompleted
		}
	}
	if completedAtOK && completedAt != nil {
		r.CompletedAt = completedAt
		if in.Conclusion == nil && r.Conclusion == nil {
			f.Addf(runResource, "conclusion", "conclusion is required when completed_at is given")
		}
	}
	if !r.Completed() {
		r.Conclusion, r.CompletedAt = nil, nil
		return
	}
	if r.Conclusion == nil && in.Conclusion == nil {
		f.Addf(runResource, "conclusion", "conclusion is required when status is completed")
	}
	if r.CompletedAt == nil {
		r.CompletedAt = &now
	}
}

// parseTime parses an ISO 8601 timestamp field; ok is false when it was
// not sent or is invalid (a field error then).
func parseTime(v *string, field string, f *apierr.Fields) (*time.Time, bool) {
	if v == nil {
		return nil, false
	}
	t, err := time.Parse(time.RFC3339, *v)
	if err != nil {
		f.Add(runResource, field, apierr.CodeInvalid)
		return nil, false
	}
	t = t.UTC().Truncate(time.Microsecond)
	return &t, true
}

// applyOutput applies the output's title, summary and text and returns
// its annotations.
func (in RunInput) applyOutput(r *Run, f *apierr.Fields) []Annotation {
	o := in.Output
	if o == nil {
		return nil
	}
	if o.Title == nil {
		f.Add(runResource, "output.title", apierr.CodeMissingField)
	}
	if o.Summary == nil {
		f.Add(runResource, "output.summary", apierr.CodeMissingField)
	} else {
		f.MaxLength(runResource, "output.summary", *o.Summary, MaxOutputText)
	}
	if o.Text != nil {
		f.MaxLength(runResource, "output.text", *o.Text, MaxOutputText)
	}
	r.Title, r.Summary = o.Title, o.Summary
	if o.Text != nil {
		r.Text = o.Text
	}
	if len(o.Annotations) > MaxAnnotationsPerRequest {
		f.Addf(runResource, "output.annotations", "There are more than %d annotations in the request; send at most %d per request",
			MaxAnnotationsPerRequest, MaxAnnotationsPerRequest)
		return nil
	}
	out := make([]Annotation, 0, len(o.Annotations))
	for i, a := range o.Annotations {
		if ann, ok := a.annotation("output.annotations["+strconv.Itoa(i)+"]", f); ok {
			out = append(out, ann)
		}
	}
	return out
}

var annotationLevels = []string{"notice", "warning", "failure"}

// annotation validates one annotation; field names it in errors.
func (a AnnotationInput) annotation(field string, f *apierr.Fields) (Annotation, bool) {
	n := len(*f)
	out := Annotation{Title: a.Title, RawDetails: a.RawDetails, StartColumn: a.StartColumn, EndColumn: a.EndColumn}
	if a.Path == nil || *a.Path == "" {
		f.Add(runResource, field+".path", apierr.CodeMissingField)
	} else {
		out.Path = *a.Path
	}
	if a.StartLine == nil || *a.StartLine < 1 {
		f.Add(runResource, field+".start_line", apierr.CodeMissingField)
	} else {
		out.StartLine = *a.StartLine
	}
	if a.EndLine == nil || *a.EndLine < out.StartLine {
		f.Add(runResource, field+".end_line", apierr.CodeInvalid)
	} else {
		out.EndLine = *a.EndLine
	}
	if (a.StartColumn != nil || a.EndColumn != nil) && out.StartLine != out.EndLine {
		f.Addf(runResource, field+".start_column", "start_column and end_column may only be given when start_line and end_line are the same")
	}
	if a.AnnotationLevel == nil || !slices.Contains(annotationLevels, *a.AnnotationLevel) {
		f.Add(runResource, field+".annotation_level", apierr.CodeInvalid)
	} else {
		out.AnnotationLevel = *a.AnnotationLevel
	}
	if a.Message == nil || *a.Message == "" {
		f.Add(runResource, field+".message", apierr.CodeMissingField)
	} else {
		out.Message = *a.Message
		f.MaxLength(runResource, field+".message", out.Message, MaxOutputText)
	}
	if a.RawDetails != nil {
		f.MaxLength(runResource, field+".raw_details", *a.RawDetails, MaxOutputText)
	}
	return out, len(*f) == n
}

// applyActions replaces the run's actions.
func (in RunInput) applyActions(r *Run, f *apierr.Fields) {
	if in.Actions == nil {
		return
	}
	list := *in.Actions
	if len(list) > MaxActions {
		f.Addf(runResource, "actions", "A check run may have at most %d actions", MaxActions)
		return
	}
	out := []Action{}
	for i, a := range list {
		field := "actions[" + strconv.Itoa(i) + "]"
		n := len(*f)
		for _, p := range []struct {
			name string
			v    *string
			max  int
		}{{"label", a.Label, MaxActionLabel}, {"description", a.Description, MaxActionDescription}, {"identifier", a.Identifier, MaxActionIdentifier}} {
			if p.v == nil || *p.v == "" {
				f.Add(runResource, field+"."+p.name, apierr.CodeMissingField)
			} else {
				f.MaxLength(runResource, field+"."+p.name, *p.v, p.max)
			}
		}
		if len(*f) == n {
			out = append(out, Action{Label: *a.Label, Description: *a.Description, Identifier: *a.Identifier})
		}
	}
	r.Actions = out
}

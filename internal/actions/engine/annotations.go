package engine

import (
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"
)

// Annotation is what a workflow command of a step (::error::,
// ::warning::, ::notice::) or a job that could not start leaves on the
// job's check run, as the platform's check run annotations: Level is
// failure, warning or notice; a command without file= is on ".github",
// line 1.
type Annotation struct {
	Level       string `json:"level"`
	Path        string `json:"path"`
	StartLine   int64  `json:"start_line"`
	EndLine     int64  `json:"end_line"`
	StartColumn *int64 `json:"start_column,omitempty"`
	EndColumn   *int64 `json:"end_column,omitempty"`
	Title       string `json:"title,omitempty"`
	Message     string `json:"message"`
}

// The platform's bounds on a job's annotations from workflow commands: at
// most MaxStepAnnotations of each level per step, MaxJobAnnotations in
// all; the rest are only in the log.
const (
	MaxStepAnnotations = 10
	MaxJobAnnotations  = 50
)

// annotationLevels are the workflow commands that annotate, and their
// annotation levels.
var annotationLevels = map[string]string{"error": "failure", "warning": "warning", "notice": "notice"}

// JobAnnotation is the failure annotation of a job that ended with the
// message (one that could not start, such as a container job without a
// container runtime).
func JobAnnotation(message string) Annotation {
	return Annotation{Level: "failure", Path: ".github", StartLine: 1, EndLine: 1, Message: message}
}

// commandAnnotation reads the annotation of act's entry of a workflow
// command (its "command", "kvPairs" and "arg" fields); ok is false for
// other entries.
func commandAnnotation(e *logrus.Entry) (Annotation, bool) {
	cmd, _ := e.Data["command"].(string)
	level, ok := annotationLevels[cmd]
	if !ok {
		return Annotation{}, false
	}
	kv, _ := e.Data["kvPairs"].(map[string]string)
	msg, _ := e.Data["arg"].(string)
	a := Annotation{Level: level, Path: kv["file"], Title: kv["title"], Message: msg}
	a.StartLine = number(kv["line"], 1)
	a.EndLine = max(number(kv["endLine"], a.StartLine), a.StartLine)
	if a.Path == "" {
		a.Path, a.StartLine, a.EndLine = ".github", 1, 1
	}
	if col := number(kv["col"], 0); col > 0 && a.StartLine == a.EndLine {
		end := max(number(kv["endColumn"], col), col)
		a.StartColumn, a.EndColumn = &col, &end
	}
	if a.Message == "" {
		a.Message = cmd
	}
	return a, true
}

// number is s as a positive integer, else def.
func number(s string, def int64) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return def
	}
	return n
}

// annotate keeps the entry's annotation within the bounds (the caller
// holds r.mu).
func (r *recorder) annotate(e *logrus.Entry) {
	a, ok := commandAnnotation(e)
	if !ok || len(r.annotations) >= MaxJobAnnotations {
		return
	}
	key := strconv.Itoa(r.current) + "/" + a.Level
	if r.perStep[key] >= MaxStepAnnotations {
		return
	}
	r.perStep[key]++
	for _, v := range r.secrets {
		a.Message, a.Title = strings.ReplaceAll(a.Message, v, "***"), strings.ReplaceAll(a.Title, v, "***")
	}
	r.annotations = append(r.annotations, a)
}

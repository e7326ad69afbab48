package engine

import (
	"fmt"
	"testing"

	"github.com/sirupsen/logrus"
)

// entry is act's log entry of a workflow command.
func entry(cmd string, kv map[string]string, arg string) *logrus.Entry {
	return &logrus.Entry{Data: logrus.Fields{"command": cmd, "kvPairs": kv, "arg": arg}}
}

// TestCommandAnnotation: the file, lines, columns and title of a command
// as the platform reads them; columns only on one line; no file is
// .github line 1; other commands annotate nothing.
func TestCommandAnnotation(t *testing.T) {
	for _, c := range []struct {
		e    *logrus.Entry
		want string
	}{
		{entry("error", map[string]string{"file": "a.go", "line": "3", "col": "5", "title": "T"}, "m"), "failure a.go 3-3 5-5 T m"},
		{entry("warning", map[string]string{"file": "a.go", "line": "3", "endLine": "6", "col": "5"}, "m"), "warning a.go 3-6  m"},
		{entry("notice", map[string]string{"line": "9"}, "n"), "notice .github 1-1  n"},
		{entry("notice", map[string]string{"file": "b", "line": "x"}, ""), "notice b 1-1  notice"},
	} {
		a, ok := commandAnnotation(c.e)
		got := fmt.Sprintf("%s %s %d-%d", a.Level, a.Path, a.StartLine, a.EndLine)
		if a.StartColumn != nil {
			got += fmt.Sprintf(" %d-%d", *a.StartColumn, *a.EndColumn)
		}
		got += " " + a.Title + " " + a.Message
		if !ok || got != c.want {
			t.Errorf("%v: %q (ok %v); want %q", c.e.Data, got, ok, c.want)
		}
	}
	for _, cmd := range []string{"debug", "set-output", "add-mask", ""} {
		if _, ok := commandAnnotation(entry(cmd, nil, "x")); ok {
			t.Errorf("%q annotated", cmd)
		}
	}
}

// TestAnnotationsBounded: at most MaxStepAnnotations of a level per step.
func TestAnnotationsBounded(t *testing.T) {
	r := newRecorder(Spec{})
	for range MaxStepAnnotations + 3 {
		r.annotate(entry("error", nil, "e"))
		r.annotate(entry("warning", nil, "w"))
	}
	if len(r.annotations) != 2*MaxStepAnnotations {
		t.Fatalf("%d annotations", len(r.annotations))
	}
}

package reference

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"unicode/utf8"

	"forgeapi/internal/apierr"
)

// Zen are the platform's design principles, which GET /zen answers one
// of at random.
var Zen = []string{
	"Responsive is better than fast.",
	"It's not fully shipped until it's fast.",
	"Anything added dilutes everything else.",
	"Practicality beats purity.",
	"Approachable is better than simple.",
	"Mind your words, they are important.",
	"Speak like a human.",
	"Half measures are as bad as nothing at all.",
	"Encourage flow.",
	"Non-blocking is better than blocking.",
	"Favor focus over features.",
	"Avoid administrative distraction.",
	"Design for failure.",
	"Keep it logically awesome.",
}

// zen answers GET /zen: one principle, as text/plain.
func (h *Handler) zen(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain;charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write([]byte(Zen[rand.IntN(len(Zen))]))
	return err
}

// maxSaying bounds the octocat's saying, in characters.
const maxSaying = 1000

// octocatArt is the cat under the speech bubble.
const octocatArt = `
          \
           \     /\_____/\
            \   /  o   o  \
               (  ==  ^  == )
                )    ~    (
               (  /|||||\  )
              ( \/ ||||| \/ )
               \__)||||(__/
`

// octocat answers GET /octocat[?s=TEXT]: an ASCII octocat saying the text
// (a random principle of Zen without it), as application/octocat-stream.
func (h *Handler) octocat(w http.ResponseWriter, r *http.Request) error {
	s := r.URL.Query().Get("s")
	if s == "" {
		s = Zen[rand.IntN(len(Zen))]
	}
	if utf8.RuneCountInString(s) > maxSaying || strings.ContainsAny(s, "\r\n") {
		return apierr.Invalid("", "s", apierr.CodeInvalid)
	}
	w.Header().Set("Content-Type", "application/octocat-stream")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write([]byte(Octocat(s)))
	return err
}

// Octocat draws the octocat saying s in a speech bubble.
func Octocat(s string) string {
	n := utf8.RuneCountInString(s)
	line := strings.Repeat("-", n+2)
	return "\n   " + line + "\n  | " + s + " |\n   " + line + octocatArt
}

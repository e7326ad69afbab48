package app

// closers are the Close functions of what a constructor (Open, Start,
// serve) has opened so far, in the order it opened them: the one cleanup
// path when it fails part way.
type closers []func() error

// add records the Close of something just opened.
func (c *closers) add(close func() error) { *c = append(*c, close) }

// closeOnError closes everything recorded, each once and the last opened
// first, when *err is set (the constructor failed); it does nothing when
// the constructor succeeded, whose result then owns what it opened. It
// is meant to be deferred: defer opened.closeOnError(&err). Close errors
// are dropped: *err already says why the constructor failed.
func (c *closers) closeOnError(err *error) {
	if *err == nil {
		return
	}
	for i := len(*c) - 1; i >= 0; i-- {
		_ = (*c)[i]()
	}
	*c = nil
}

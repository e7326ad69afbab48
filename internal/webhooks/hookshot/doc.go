// Package hookshot sends one webhook delivery, safely.
//
// It owns the parts of a delivery that do not depend on storage: encoding the
// payload for a hook's content type ([EncodeBody]), signing the exact bytes
// sent (the X-Hub-Signature headers of each [Sender] request), refusing destinations that the operator did not allow
// ([AllowList], checked on the resolved address at dial time), POSTing with a
// timeout and recording what happened in a form fit for the delivery log
// ([Sender], [Result]). Hook secrets are sealed at rest by package secretbox.
//
// The package keeps no global state and never logs. Secrets and keys never
// appear in errors, results or String methods.
package hookshot

// Package runnerproto is forgeapi's own protocol between the server and
// the registered runners (`forgeapi runner`): JSON over HTTP under
// Prefix, each request authenticated by the runner's credential
// (Authorization: RemoteAuth CREDENTIAL, the credential /_runner/register
// answered), and each request about a job by the claim the runner got
// with it (the ClaimHeader).
//
// A runner claims a job (POST ClaimPath, waiting up to Claim.Wait for
// one: 200 with a Job, 204 for none), marks it started (a job whose lease
// runs out before is queued again, one started is failed), fetches its
// commit (GET SourcePath: a git bundle of the repository), renews the
// lease every Job.Lease/10 while it runs (a 409 means the lease is lost or
// the job was cancelled: the runner stops the job), reports each step,
// uploads the log and finishes with the result. A 409 on any job request
// means the claim is no longer the runner's.
package runnerproto

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/actions/engine"
)

// The paths of the protocol, under the server's root.
const (
	Prefix      = "/_runner"
	ClaimPath   = Prefix + "/jobs/claim"
	OfflinePath = Prefix + "/offline"
	// The job paths take the job's id (JobPath).
	StartPath  = Prefix + "/jobs/{job_id}/start"
	RenewPath  = Prefix + "/jobs/{job_id}/renew"
	SourcePath = Prefix + "/jobs/{job_id}/source"
	StepPath   = Prefix + "/jobs/{job_id}/steps"
	LogPath    = Prefix + "/jobs/{job_id}/log"
	FinishPath = Prefix + "/jobs/{job_id}/finish"
)

// ClaimHeader carries a job request's claim.
const ClaimHeader = "Forgeapi-Job-Claim"

// AuthScheme is the Authorization scheme of the runner's credential.
const AuthScheme = "RemoteAuth"

// MaxWait bounds how long a claim waits for a job.
const MaxWait = 20 * time.Second

// JobPath is a job path (StartPath, ...) of the job id.
func JobPath(pattern string, id int64) string {
	return strings.Replace(pattern, "{job_id}", strconv.FormatInt(id, 10), 1)
}

// Claim is the body of a claim.
type Claim struct {
	// Wait is how long the server may wait for a job, in seconds (at most
	// MaxWait; 0 answers at once).
	Wait int `json:"wait"`
	// Session is the runner process's random id: an ephemeral runner's
	// credential serves the first process that claims with it alone (a
	// 409 for another), so a just-in-time configuration runs once.
	Session string `json:"session,omitempty"`
}

// Job is a claimed job: what the runner needs to run it.
type Job struct {
	ID    int64  `json:"id"`
	Claim string `json:"claim"` // sent back in ClaimHeader
	// Lease is how long the claim holds without a renewal, in seconds.
	Lease int `json:"lease"`
	// Repository is OWNER/NAME, HeadSHA the commit the job runs on and
	// CloneURL the repository's git address (the work tree's origin).
	Repository string `json:"repository"`
	HeadSHA    string `json:"head_sha"`
	CloneURL   string `json:"clone_url"`
	Spec       Spec   `json:"spec"`
}

// Spec is the engine's input (engine.Spec) without the runner's own
// parts: work tree, scratch directory, log and step callback.
type Spec struct {
	Workflow     []byte                 `json:"workflow"`
	JobKey       string                 `json:"job_key"`
	Matrix       map[string]any         `json:"matrix,omitempty"`
	Event        string                 `json:"event"`
	EventPayload json.RawMessage        `json:"event_payload,omitempty"`
	Actor        string                 `json:"actor"`
	Inputs       map[string]string      `json:"inputs,omitempty"`
	Secrets      map[string]string      `json:"secrets,omitempty"`
	Vars         map[string]string      `json:"vars,omitempty"`
	Env          map[string]string      `json:"env,omitempty"`
	Token        string                 `json:"token"`
	Masks        []string               `json:"masks,omitempty"`
	Needs        map[string]engine.Need `json:"needs,omitempty"`
	Call         *engine.CallSpec       `json:"call,omitempty"`
}

// FromEngine is the wire form of an engine's input.
func FromEngine(s engine.Spec) Spec {
	return Spec{Workflow: s.Workflow, JobKey: s.JobKey, Matrix: s.Matrix, Event: s.Event, EventPayload: s.EventPayload,
		Actor: s.Actor, Inputs: s.Inputs, Secrets: s.Secrets, Vars: s.Vars, Env: s.Env, Token: s.Token, Masks: s.Masks,
		Needs: s.Needs, Call: s.Call}
}

// Engine is the engine's input of the wire form; the caller sets the
// work tree, scratch directory, log and step callback.
func (s Spec) Engine() engine.Spec {
	return engine.Spec{Workflow: s.Workflow, JobKey: s.JobKey, Matrix: s.Matrix, Event: s.Event, EventPayload: s.EventPayload,
		Actor: s.Actor, Inputs: s.Inputs, Secrets: s.Secrets, Vars: s.Vars, Env: s.Env, Token: s.Token, Masks: s.Masks,
		Needs: s.Needs, Call: s.Call}
}

// Renewal is the answer of a renewal.
type Renewal struct {
	Lease int `json:"lease"` // seconds
}

// Finish is how the job ended.
type Finish struct {
	Conclusion string            `json:"conclusion"` // success, failure or cancelled
	Outputs    map[string]string `json:"outputs"`
	Steps      []engine.Step     `json:"steps"`
	// Annotations are the job's check run annotations (its steps'
	// workflow commands, or why it could not start).
	Annotations []engine.Annotation `json:"annotations,omitempty"`
}

// JITConfig is a just-in-time runner's configuration, which
// generate-jitconfig answers base64-encoded (Encode) and `forgeapi runner
// run --jitconfig` reads (DecodeJIT): a runner already registered,
// ephemeral, that takes one job and is then removed.
type JITConfig struct {
	URL        string   `json:"url"` // the server's URL
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Labels     []string `json:"labels"`
	Credential string   `json:"credential"`
	WorkFolder string   `json:"work_folder"`
}

// Encode is the configuration's encoded form: base64 of its JSON.
func (c JITConfig) Encode() string {
	b, _ := json.Marshal(c) // plain strings: cannot fail
	return base64.StdEncoding.EncodeToString(b)
}

// errBadJIT refuses a string that is not an encoded configuration.
var errBadJIT = errors.New("not an encoded just-in-time runner configuration")

// DecodeJIT reads an encoded configuration.
func DecodeJIT(s string) (JITConfig, error) {
	var c JITConfig
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || json.Unmarshal(b, &c) != nil || c.URL == "" || c.Credential == "" {
		return c, errBadJIT
	}
	return c, nil
}

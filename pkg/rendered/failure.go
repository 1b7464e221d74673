package rendered

// FailureFormat is the version of the JSON form of a [Failure].
const FailureFormat = 1

// Failure is what the rehost-helm helper writes on standard output when it
// fails (exit status 1), besides its message on standard error: facts
// about the failure, for rehost to word (a flag to suggest) without
// matching the message's text.
type Failure struct {
	// Format is [FailureFormat].
	Format int `json:"format"`
	// PlainHTTP is set when a registry answered an HTTPS request in plain
	// HTTP (Go's http.ErrSchemeMismatch): it may be reached over plain
	// HTTP only.
	PlainHTTP bool `json:"plainHTTP,omitempty"`
}

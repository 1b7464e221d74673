package mirror

// Reporter receives the progress of a run as events: the facts a front end
// draws (rehost's command line draws a status line on a terminal, a line
// per image otherwise). A Mirror never calls it from two goroutines at
// once, so implementations need no locking. Strings that come from a
// layout, an archive or a registry (Job.Source, Result.Destination,
// Attachment fields) are passed as they are, to be quoted when printed
// (Quote); messages (Warn, Notice, the errors of results) are scrubbed of
// credentials and of what is not printable.
type Reporter interface {
	// Begin starts a run of total images.
	Begin(total int)
	// Start says that a job started.
	Start(j Job)
	// Transferred adds n bytes to the bytes transferred so far.
	Transferred(n int64)
	// Warn reports something the user should know about a job, such as a
	// digest changed by a platform filter.
	Warn(j Job, msg string)
	// Done says that a job finished, successfully or not.
	Done(r Result)
	// End closes the run with its summary.
	End(s Summary)
}

// Noticer is implemented by Reporters that take notices about a run as a
// whole rather than one image, such as a loopback registry reached over
// plain HTTP. A Mirror calls Notice only if its Reporter implements it.
type Noticer interface {
	Notice(n Notice)
}

// Notice is something to know about a run as a whole: a fact, and a
// message that says it without advice about any front end's flags.
type Notice struct {
	// Msg is the notice in words, scrubbed like every message.
	Msg string
	// PlainHTTP, when set, is the loopback registry host ("host:port")
	// reached over plain HTTP, which needs no Options.Insecure since the
	// traffic never leaves the machine. Any other host needs TLS.
	PlainHTTP string
	// Unchecked, when set, is an archive read without a checksum file
	// (ImportArchive): only the digests of its blobs check it.
	Unchecked string
}

type discard struct{}

func (discard) Begin(int)         {}
func (discard) Start(Job)         {}
func (discard) Transferred(int64) {}
func (discard) Warn(Job, string)  {}
func (discard) Done(Result)       {}
func (discard) End(Summary)       {}

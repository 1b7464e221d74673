package mirror

import (
	"errors"
	"fmt"
	"time"

	"github.com/rehost/rehost/pkg/rewrite"
)

// Job is one image to copy, or one Helm chart to push.
type Job struct {
	// Source is the image to copy, fully qualified as in an image list:
	// "docker.io/library/nginx:1.25", "quay.io/x/y:1.0@sha256:…". With a
	// digest, the image is read by digest.
	Source string `json:"source"`
	// Target is the image's reference in the private registry:
	// "sea.hub:5000/library/nginx:1.25". The image is written under the
	// target's tag, or by digest when the target has no tag. When the
	// destination is an OCI layout, the target is only recorded.
	Target string `json:"target"`
	// Chart, when set, makes the job push a Helm chart (see ChartJob):
	// Source then names where the chart came from, for reports, and
	// Target is its tag in the charts repository.
	Chart *Chart `json:"chart,omitempty"`
}

// Jobs returns a job for every image the mapping moves to the target
// registry (Action rewritten), in the order given. Excluded images and
// images already in the target registry are not copied.
func Jobs(images []rewrite.Image) []Job {
	var out []Job
	for _, img := range images {
		if img.Action == rewrite.Rewritten {
			out = append(out, Job{Source: img.Source, Target: img.Target})
		}
	}
	return out
}

// Status is what happened to one image.
type Status string

const (
	// Copied: the image was written to the destination.
	Copied Status = "copied"
	// Skipped: the destination already held the image with the same digest.
	Skipped Status = "skipped"
	// Failed: the image could not be copied; Result.Err says why.
	Failed Status = "failed"
	// Planned: a dry run would copy the image.
	Planned Status = "planned"
)

// Result is the outcome of one job.
type Result struct {
	Job
	// Destination is where the image went, for reports: the target
	// reference, or "oci:DIR" for an OCI layout.
	Destination string `json:"destination"`
	// Via is the address the image was pushed to when it is not the
	// target's registry (Options.PushRegistry): "10.0.0.5:5000".
	Via string `json:"via,omitempty"`
	// From is the address the image was read from when it is not its
	// source: its source mirror (Options.SourceMirrors),
	// "mirror.corp:5000/dockerhub/library/nginx:1.25". Empty when it was
	// read from its own registry, the mirror lacking it. A dry run that
	// asks no registry gives the mirror it would try first.
	From   string `json:"from,omitempty"`
	Status Status `json:"status"`
	// Digest is the digest of the image in the destination ("sha256:…"),
	// when known: always after a copy or a skip, in a dry run only with
	// Options.Pin.
	Digest string `json:"digest,omitempty"`
	// Bytes is how many bytes were transferred for this image and its
	// attachments: uploaded to a registry, or downloaded into an OCI layout.
	Bytes int64 `json:"bytes"`
	// Err is set when Status is Failed.
	Err error `json:"-"`
	// Verification is what the verification of the image's signatures
	// found (Options.Verify); nil when not verified.
	Verification *Verification `json:"verification,omitempty"`
	// Attachments are the outcomes for the artifacts attached to the
	// image (Options.Attachments), in the order they were found.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Pinned is the target reference with the digest added,
// "sea.hub:5000/library/nginx:1.25@sha256:…", or "" when the digest is not
// known. The tag is kept, so the reference still says which version it is.
func (r Result) Pinned() string {
	if r.Digest == "" {
		return ""
	}
	ref, err := rewrite.ParseRef(r.Target)
	if err != nil {
		return ""
	}
	ref.Digest = r.Digest
	return ref.String()
}

// Summary is the outcome of a run.
type Summary struct {
	// Results has one entry per job, in the order of the jobs.
	Results []Result
	// Copied, Skipped, Failed and Planned count the images by status.
	Copied, Skipped, Failed, Planned int
	// Attachments counts the attachments of the images by status.
	Attachments Counts
	// Charts counts the Helm charts (jobs with a Chart) by status; they
	// are not counted as images.
	Charts Counts
	// Verified counts the images whose signature a key verified
	// (Options.Verify), Unverified those it did not: failed, or copied
	// with a warning (Verify.Warn).
	Verified, Unverified int
	// Bytes is the sum of the results' bytes.
	Bytes int64
	// Elapsed is the run's wall-clock time.
	Elapsed time.Duration
	// ListedAttachments says that the run looked for attachments
	// (Options.Attachments is not AttachmentsNone, and a dry run does not
	// pin), so that Attachments counts them.
	ListedAttachments bool
	// DryRun says that the run was a dry run (Options.DryRun).
	DryRun bool
	// Shard is the part of the images and charts the run copied
	// (Options.Shard); the zero value for the whole run.
	Shard Shard
	// Elsewhere counts the images and charts the run left to the other
	// parts (Options.Shard): each is in the Summary of its part.
	Elsewhere int
}

// Counts counts outcomes by status.
type Counts struct {
	Copied, Skipped, Failed, Planned int
}

func (c *Counts) add(s Status) {
	switch s {
	case Copied:
		c.Copied++
	case Skipped:
		c.Skipped++
	case Failed:
		c.Failed++
	case Planned:
		c.Planned++
	}
}

// Total is how many outcomes were counted.
func (c Counts) Total() int { return c.Copied + c.Skipped + c.Failed + c.Planned }

// Images is how many results are images (not charts).
func (s Summary) Images() int { return len(s.Results) - s.Charts.Total() }

func (s *Summary) add(r Result) {
	s.Results = append(s.Results, r)
	if r.Chart != nil {
		s.Charts.add(r.Status)
		s.Bytes += r.Bytes
		return
	}
	if v := r.Verification; v != nil {
		if v.Verdict == Verified {
			s.Verified++
		} else {
			s.Unverified++
		}
	}
	c := Counts{s.Copied, s.Skipped, s.Failed, s.Planned}
	c.add(r.Status)
	s.Copied, s.Skipped, s.Failed, s.Planned = c.Copied, c.Skipped, c.Failed, c.Planned
	for _, a := range r.Attachments {
		s.Attachments.add(a.Status)
	}
	s.Bytes += r.Bytes
}

// Err returns nil when no image, chart or attachment failed, otherwise
// every failure joined (errors.Join of *ImageError and *AttachmentError
// values; a chart's is an *ImageError whose Job has the Chart).
func (s Summary) Err() error {
	var errs []error
	for _, r := range s.Results {
		if r.Status == Failed {
			errs = append(errs, &ImageError{Job: r.Job, Err: r.Err})
		}
		for _, a := range r.Attachments {
			if a.Status == Failed {
				errs = append(errs, &AttachmentError{Job: r.Job, Attachment: a})
			}
		}
	}
	return errors.Join(errs...)
}

// AttachmentError is the failure to copy an attachment that is there.
type AttachmentError struct {
	Job        Job
	Attachment Attachment
}

// Error is "SOURCE -> TARGET: KIND SOURCE -> DESTINATION: reason", with
// untrusted strings quoted (Quote).
func (e *AttachmentError) Error() string {
	a := e.Attachment
	return fmt.Sprintf("%s -> %s: %s %s -> %s: %s", Quote(e.Job.Source), Quote(e.Job.Target), Quote(string(a.Kind)), Quote(a.Source), Quote(a.Destination), errText(a.Err))
}

// Unwrap returns the reason, for errors.Is and errors.As.
func (e *AttachmentError) Unwrap() error { return e.Attachment.Err }

// ImageError is the failure of one job.
type ImageError struct {
	Job Job
	Err error
}

// Error is "SOURCE -> TARGET: reason" ("chart SOURCE -> TARGET: reason"
// for a chart), with untrusted strings quoted (Quote).
func (e *ImageError) Error() string {
	kind := ""
	if e.Job.Chart != nil {
		kind = "chart "
	}
	if e.Job.Target == "" {
		return fmt.Sprintf("%s%s: %s", kind, Quote(e.Job.Source), errText(e.Err))
	}
	return fmt.Sprintf("%s%s -> %s: %s", kind, Quote(e.Job.Source), Quote(e.Job.Target), errText(e.Err))
}

// Unwrap returns the reason, for errors.Is and errors.As.
func (e *ImageError) Unwrap() error { return e.Err }

// errText is an error's message on one line, unprintable characters
// escaped.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return clean(err.Error())
}

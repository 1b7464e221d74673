package mirror

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/rehost/rehost/pkg/rewrite"
)

// MaxShards bounds Shard.Count: far more workers than any registry wants
// at once, and small enough that a count is never a typing accident of
// a 64-bit number.
const MaxShards = 1 << 16

// Shard is one of Count disjoint parts of the images and charts of a run
// (Options.Shard): Count runs, each with its Index (0 to Count-1), copy
// together exactly what one run without a shard copies, each image once.
// The zero value, like Count 1, is the whole run.
//
// The part of a job is fixed by its name alone, never by its position in
// a list, so that adding or removing an image moves no other image to
// another part (changing Count does): an image goes to the part
// ShardOf(ShardKey(job), Count), where the key is its source repository
// ("docker.io/library/nginx"), and a chart's is its name. Every tag and
// digest of one repository, and what is attached to them (cosign's tags,
// referrers, which live in that repository), go to the same part, so
// that no two parts write one target repository (package rewrite refuses
// two source repositories that map to one target repository). The part
// depends on the source only, not on the target: a layout or archive
// written for one registry splits the same way when pushed to another.
type Shard struct {
	// Index is this part, from 0 (a Kubernetes Indexed Job's
	// JOB_COMPLETION_INDEX) to Count-1.
	Index int
	// Count is how many parts there are; 0 or 1 means one, the whole run.
	Count int
}

// ParseShard parses "K/N", the K-th of N parts: decimal numbers with
// 0 ≤ K < N ≤ MaxShards ("0/3", "2/3"). Anything else is a *ShardError.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, &ShardError{Value: s, Reason: "not of the form K/N"}
	}
	num := func(what, v string) (int, error) {
		if v == "" {
			return 0, &ShardError{Value: s, Reason: fmt.Sprintf("the %s is missing", what)}
		}
		if v[0] == '-' && v != "-" && isDigits(v[1:]) {
			return 0, &ShardError{Value: s, Reason: fmt.Sprintf("the %s %s is negative", what, v)}
		}
		if !isDigits(v) {
			return 0, &ShardError{Value: s, Reason: fmt.Sprintf("the %s %s is not a number", what, Quote(v))}
		}
		i, err := strconv.Atoi(v)
		if err != nil || i > MaxShards {
			return 0, &ShardError{Value: s, Reason: fmt.Sprintf("the %s %s is more than %d", what, v, MaxShards)}
		}
		return i, nil
	}
	idx, err := num("index", k)
	if err != nil {
		return Shard{}, err
	}
	cnt, err := num("count", n)
	if err != nil {
		return Shard{}, err
	}
	if cnt < 1 {
		return Shard{}, &ShardError{Value: s, Reason: "the count 0 is less than 1"}
	}
	sh := Shard{Index: idx, Count: cnt}
	if err := sh.check(); err != nil {
		err.Value = s
		return Shard{}, err
	}
	return sh, nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// check returns a *ShardError when s is not a part of a run (the zero
// value is: the whole run).
func (s Shard) check() *ShardError {
	bad := func(reason string) *ShardError {
		return &ShardError{Value: s.String(), Reason: reason}
	}
	switch {
	case s.Count < 0:
		return bad(fmt.Sprintf("the count %d is negative", s.Count))
	case s.Count == 0 && s.Index != 0:
		return bad("the count 0 is less than 1")
	case s.Count > MaxShards:
		return bad(fmt.Sprintf("the count %d is more than %d", s.Count, MaxShards))
	case s.Index < 0:
		return bad(fmt.Sprintf("the index %d is negative", s.Index))
	case s.Count > 0 && s.Index >= s.Count:
		return bad(fmt.Sprintf("the index %d is not less than the count %d: the %d shards are numbered 0 to %d", s.Index, s.Count, s.Count, s.Count-1))
	}
	return nil
}

// String is "K/N", as ParseShard reads it; "" for the zero value.
func (s Shard) String() string {
	if s == (Shard{}) {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Whole says whether s is the whole run: Count 0 or 1.
func (s Shard) Whole() bool { return s.Count <= 1 }

// Has says whether the job j belongs to the part s.
func (s Shard) Has(j Job) bool {
	return s.Whole() || ShardOf(ShardKey(j), s.Count) == s.Index
}

// Jobs returns the jobs of the part s, in their order.
func (s Shard) Jobs(jobs []Job) []Job {
	if s.Whole() {
		return jobs
	}
	var out []Job
	for _, j := range jobs {
		if s.Has(j) {
			out = append(out, j)
		}
	}
	return out
}

// ShardKey is what decides the part of a job: a chart's name, else the
// source's repository, fully qualified as package rewrite normalises it
// ("nginx:1.25" and "index.docker.io/library/nginx@sha256:…" are both
// "docker.io/library/nginx"). A source that is not a reference is its own
// key (its job fails, in one part).
func ShardKey(j Job) string {
	if j.Chart != nil {
		return j.Chart.Name
	}
	return sourceKey(j.Source)
}

// sourceKey is the key of an image source (see ShardKey).
func sourceKey(src string) string {
	if r, err := rewrite.ParseRef(src); err == nil {
		return r.RepositoryName()
	}
	return src
}

// ShardOf is the part of count that holds key: the first 8 bytes of the
// SHA-256 of key, read as a big-endian unsigned number, modulo count; 0
// when count is less than 2. Any tool can compute it:
//
//	printf %s docker.io/library/nginx | sha256sum | cut -c1-16
//
// is that number in hexadecimal.
func ShardOf(key string, count int) int {
	if count < 2 {
		return 0
	}
	sum := sha256.Sum256([]byte(key))
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(count))
}

// ShardError is a shard that is not one: a value that is not K/N of
// decimal numbers, a count less than 1, or an index that is negative or
// not less than the count.
type ShardError struct {
	// Value is the shard as given ("3/3").
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (e *ShardError) Error() string {
	return fmt.Sprintf("shard %s: %s", Quote(e.Value), e.Reason)
}

package mirror

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/rehost/rehost/pkg/rewrite"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  string // in the reason; "" for none
	}{
		{in: "0/1", want: Shard{0, 1}},
		{in: "0/3", want: Shard{0, 3}},
		{in: "2/3", want: Shard{2, 3}},
		{in: "09/10", want: Shard{9, 10}},
		{in: "65535/65536", want: Shard{65535, 65536}},
		{in: "3/3", err: "the index 3 is not less than the count 3: the 3 shards are numbered 0 to 2"},
		{in: "4/3", err: "the index 4 is not less than the count 3"},
		{in: "0/0", err: "the count 0 is less than 1"},
		{in: "-1/3", err: "the index -1 is negative"},
		{in: "1/-3", err: "the count -3 is negative"},
		{in: "a/3", err: `the index a is not a number`},
		{in: "1/three", err: "the count three is not a number"},
		{in: "+1/3", err: "the index +1 is not a number"},
		{in: "1.0/3", err: "the index 1.0 is not a number"},
		{in: " 1/3", err: `the index " 1" is not a number`},
		{in: "1/3 ", err: `the count "3 " is not a number`},
		{in: "1/3/4", err: "the count 3/4 is not a number"},
		{in: "-/3", err: "the index - is not a number"},
		{in: "", err: "not of the form K/N"},
		{in: "3", err: "not of the form K/N"},
		{in: "/3", err: "the index is missing"},
		{in: "1/", err: "the count is missing"},
		{in: "0/65537", err: "the count 65537 is more than 65536"},
		{in: "0/99999999999999999999999", err: "is more than 65536"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseShard(tc.in)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
				}
				if got.String() != tc.in && strings.TrimLeft(tc.in, "0") != strings.TrimLeft(got.String(), "0") {
					t.Errorf("String() = %q, want %q", got.String(), tc.in)
				}
				return
			}
			var se *ShardError
			if !errors.As(err, &se) {
				t.Fatalf("ParseShard(%q) = %v, %v; want a *ShardError", tc.in, got, err)
			}
			if se.Value != tc.in || !strings.Contains(se.Reason, tc.err) {
				t.Errorf("error %+v, want value %q and a reason with %q", se, tc.in, tc.err)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("error %q names a flag", err)
			}
		})
	}
}

// TestShardOptions: New refuses a shard that is not one, and takes the
// zero value and any K/N.
func TestShardOptions(t *testing.T) {
	for _, sh := range []Shard{{}, {0, 1}, {2, 3}} {
		if _, err := New(Options{Shard: sh}); err != nil {
			t.Errorf("New(Shard %v): %v", sh, err)
		}
	}
	for _, sh := range []Shard{{3, 3}, {-1, 3}, {0, -2}, {1, 0}, {0, MaxShards + 1}} {
		_, err := New(Options{Shard: sh})
		var se *ShardError
		if !errors.As(err, &se) {
			t.Errorf("New(Shard %+v) = %v, want a *ShardError", sh, err)
		}
	}
}

// TestShardOf pins the assignment: it is documented (the first 8 bytes
// of the SHA-256 of the key, modulo the count), and workers of different
// versions must agree on it. The values come from sha256sum.
func TestShardOf(t *testing.T) {
	for _, tc := range []struct {
		key        string
		of3, of7   int
		jobs       []Job
		chartNamed bool
	}{
		{key: "docker.io/library/nginx", of3: 0, of7: 1, jobs: []Job{
			{Source: "nginx"}, {Source: "nginx:1.25"}, {Source: "docker.io/library/nginx:1.26"},
			{Source: "index.docker.io/library/nginx@sha256:" + strings.Repeat("a", 64)},
			{Source: "docker.io/nginx:1.25@sha256:" + strings.Repeat("b", 64)},
		}},
		{key: "quay.io/jetstack/cert-manager-controller", of3: 1, of7: 1, jobs: []Job{
			{Source: "quay.io/jetstack/cert-manager-controller:v1.14.0"},
		}},
		{key: "ingress-nginx", of3: 2, of7: 2, jobs: []Job{
			{Source: "ingress-nginx 4.11.0", Chart: &Chart{Name: "ingress-nginx", Version: "4.11.0"}},
			{Source: "oci://elsewhere/ingress-nginx:4.12.0", Chart: &Chart{Name: "ingress-nginx", Version: "4.12.0"}},
		}},
	} {
		if got := ShardOf(tc.key, 3); got != tc.of3 {
			t.Errorf("ShardOf(%q, 3) = %d, want %d", tc.key, got, tc.of3)
		}
		if got := ShardOf(tc.key, 7); got != tc.of7 {
			t.Errorf("ShardOf(%q, 7) = %d, want %d", tc.key, got, tc.of7)
		}
		for _, j := range tc.jobs {
			if got := ShardKey(j); got != tc.key {
				t.Errorf("ShardKey(%+v) = %q, want %q", j, got, tc.key)
			}
			if !(Shard{tc.of3, 3}).Has(j) || (Shard{(tc.of3 + 1) % 3, 3}).Has(j) {
				t.Errorf("%s is not in part %d/3 alone", j.Source, tc.of3)
			}
		}
	}
	for _, n := range []int{-1, 0, 1} {
		if got := ShardOf("docker.io/library/nginx", n); got != 0 {
			t.Errorf("ShardOf(_, %d) = %d, want 0", n, got)
		}
	}
}

// shardJobs is an image set of repos repositories (tags and digests of
// each), a few charts, and a source that does not parse.
func shardJobs(repos int) []Job {
	var jobs []Job
	for i := 0; i < repos; i++ {
		repo := fmt.Sprintf("registry-%d.example/team-%d/app-%d", i%7, i%13, i)
		jobs = append(jobs, Job{Source: repo + ":1.0", Target: "sea.hub:5000/" + repo[strings.IndexByte(repo, '/')+1:] + ":1.0"})
		if i%3 == 0 {
			jobs = append(jobs, Job{Source: repo + ":2.0"}, Job{Source: repo + "@sha256:" + strings.Repeat(fmt.Sprint(i%10), 64)})
		}
	}
	for i := 0; i < repos/10; i++ {
		jobs = append(jobs, Job{Source: fmt.Sprintf("chart-%d 1.0.0", i), Chart: &Chart{Name: fmt.Sprintf("chart-%d", i), Version: "1.0.0"}})
	}
	return append(jobs, Job{Source: "Not A Reference"})
}

// TestShardPartition: for every count, the parts are disjoint, together
// the whole set in its order, every tag and digest of a repository (and
// every version of a chart) in one part; adding images moves none of the
// others; and no part is far from its share.
func TestShardPartition(t *testing.T) {
	all := shardJobs(200)
	more := append(append([]Job{}, all...), shardJobs(300)[len(all):]...)
	for _, n := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			part := map[string]int{} // source -> its part
			key := map[string]int{}  // shard key -> its part
			total := 0
			for k := 0; k < n; k++ {
				sh := Shard{k, n}
				got := sh.Jobs(all)
				total += len(got)
				for _, j := range got {
					if p, ok := part[j.Source]; ok {
						t.Fatalf("%s in parts %d and %d", j.Source, p, k)
					}
					part[j.Source] = k
					if p, ok := key[ShardKey(j)]; ok && p != k {
						t.Errorf("%s: its repository %s is in parts %d and %d", j.Source, ShardKey(j), p, k)
					}
					key[ShardKey(j)] = k
				}
				if n >= 2 && n <= 8 {
					// 200 repositories and 20 charts: a part holds about
					// 220/n keys; the hash is fixed, so this cannot flake.
					keys := 0
					for _, p := range key {
						if p == k {
							keys++
						}
					}
					if share := 220 / n; keys < share/2 || keys > share*2 {
						t.Errorf("part %d/%d holds %d keys, far from %d", k, n, keys, share)
					}
				}
			}
			if total != len(all) || len(part) != len(all) {
				t.Fatalf("parts hold %d jobs (%d sources), want %d", total, len(part), len(all))
			}
			// The union, part by part in the order of the jobs, is the set.
			for k := 0; k < n; k++ {
				i, jobs := 0, (Shard{k, n}).Jobs(all)
				for _, j := range all {
					if part[j.Source] == k {
						if got := jobs[i]; got.Source != j.Source {
							t.Fatalf("part %d: job %d is %s, want %s (the order of the jobs)", k, i, got.Source, j.Source)
						}
						i++
					}
				}
			}
			// Adding images moves no other.
			for k := 0; k < n; k++ {
				for _, j := range (Shard{k, n}).Jobs(more) {
					if p, ok := part[j.Source]; ok && p != k {
						t.Errorf("%s moved from part %d to %d when images were added", j.Source, p, k)
					}
				}
			}
		})
	}
}

// contents is every tag of every repository of a registry with its
// digest: "repo:tag" -> digest.
func contents(t *testing.T, host string) map[string]string {
	t.Helper()
	reg, err := name.NewRegistry(host)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := remote.Catalog(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range repos {
		repo := reg.Repo(r)
		tags, err := remote.List(repo)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range tags {
			out[r+":"+tag] = head(t, repo.Tag(tag).String())
		}
	}
	return out
}

// shardFixture is a source registry holding indexes and images with
// cosign signatures and referrers, in several repositories, a repository
// with two tags of one index, and the jobs that copy them to dst.
func shardFixture(t *testing.T, src, dst *testRegistry) []Job {
	var jobs []Job
	for i := 0; i < 9; i++ {
		repo := fmt.Sprintf("%s/team/app-%d", src.host, i)
		var x remote.Taggable = randomImage(t, 128, 1)
		if i%2 == 0 {
			x = randomIndex(t, 128, 1, "linux/amd64", "linux/arm64")
		}
		d := push(t, repo+":1.0", x)
		tagAttach(t, repo, d, "sig")
		referrer(t, repo, d, "application/vnd.example.sbom", nil)
		jobs = append(jobs, Job{Source: repo + ":1.0", Target: fmt.Sprintf("%s/team/app-%d:1.0", dst.host, i)})
		if i == 4 {
			// The same index under a second tag: its signature is the
			// same manifest; it stays in the part of its repository.
			push(t, repo+":latest", x)
			jobs = append(jobs, Job{Source: repo + ":latest", Target: fmt.Sprintf("%s/team/app-%d:latest", dst.host, i)})
		}
	}
	return jobs
}

// TestShardCopy: three parts copied one after the other into one
// registry give what one run gives, tag for tag and digest for digest;
// each image and attachment is copied by one part; a part run again
// copies nothing.
func TestShardCopy(t *testing.T) {
	src := newTestRegistry(t, registry.WithReferrersSupport(true))
	one, three := newTestRegistry(t, registry.WithReferrersSupport(true)), newTestRegistry(t, registry.WithReferrersSupport(true))
	jobs := shardFixture(t, src, one)
	s := newMirror(t, Options{}).Copy(context.Background(), jobs)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Shard != (Shard{}) || s.Elsewhere != 0 {
		t.Errorf("whole run: shard %v, elsewhere %d", s.Shard, s.Elsewhere)
	}
	retarget := func(js []Job) []Job {
		out := make([]Job, len(js))
		for i, j := range js {
			out[i] = Job{Source: j.Source, Target: strings.Replace(j.Target, one.host, three.host, 1)}
		}
		return out
	}
	// What one run copied, and how many parts copied each of them (two
	// tags of one index may both copy its signature, in a run as in a
	// part, whichever comes first: a part counts once).
	whole := map[string]bool{}
	for _, r := range s.Results {
		whole[r.Source] = true
		for _, a := range r.Attachments {
			if a.Status == Copied {
				whole[a.Source] = true
			}
		}
	}
	copied := map[string]int{}
	for k := 0; k < 3; k++ {
		ev := &events{}
		sh := newMirror(t, Options{Shard: Shard{k, 3}, Reporter: ev}).Copy(context.Background(), retarget(jobs))
		if err := sh.Err(); err != nil {
			t.Fatal(err)
		}
		if sh.Shard != (Shard{k, 3}) || sh.Elsewhere != len(jobs)-len(sh.Results) || ev.begin != len(sh.Results) || ev.end.Elsewhere != sh.Elsewhere {
			t.Errorf("part %d: shard %v, elsewhere %d of %d jobs, %d results, begin %d", k, sh.Shard, sh.Elsewhere, len(jobs), len(sh.Results), ev.begin)
		}
		part := map[string]bool{}
		for _, r := range sh.Results {
			if r.Status != Copied {
				t.Errorf("part %d: %s %s", k, r.Source, r.Status)
			}
			part[r.Source] = true
			for _, a := range r.Attachments {
				if a.Status == Copied {
					part[a.Source] = true
				}
			}
		}
		for src := range part {
			copied[src]++
		}
	}
	for src, n := range copied {
		if n != 1 || !whole[src] {
			t.Errorf("%s copied by %d parts (by one run: %v)", src, n, whole[src])
		}
	}
	if len(copied) != len(whole) {
		t.Errorf("the parts copied %d images and attachments, one run %d", len(copied), len(whole))
	}
	want, got := contents(t, one.host), contents(t, three.host)
	if len(want) < len(jobs) || fmt.Sprint(sortedKeys(want)) != fmt.Sprint(sortedKeys(got)) {
		t.Fatalf("three parts wrote\n%v\none run\n%v", sortedKeys(got), sortedKeys(want))
	}
	for k, d := range want {
		if got[k] != d {
			t.Errorf("%s: %s, one run %s", k, got[k], d)
		}
	}
	// A part run again resumes: nothing to copy.
	again := newMirror(t, Options{Shard: Shard{1, 3}}).Copy(context.Background(), retarget(jobs))
	if again.Copied != 0 || again.Attachments.Copied != 0 || again.Skipped == 0 {
		t.Errorf("part 1/3 again: %d copied, %d skipped, attachments %+v", again.Copied, again.Skipped, again.Attachments)
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestShardLayout: a layout written whole and pushed by three parts, and
// three archives written by three parts and each pushed whole, give the
// registry one run gives; a part's Import sees only its images, and
// notices (an image the mapping leaves in place) in the part of the image.
func TestShardLayout(t *testing.T) {
	src := newTestRegistry(t)
	one := newTestRegistry(t)
	jobs := shardFixture(t, src, one)
	mp := func(host string) *rewrite.Mapper {
		return mapper(t, rewrite.Config{Registry: host, Exclude: []string{src.host + "/team/app-3"}})
	}
	dir := t.TempDir()
	if s, err := newMirror(t, Options{}).Export(context.Background(), jobs, dir); err != nil || s.Err() != nil {
		t.Fatal(err, s.Err())
	}
	wev := &events{}
	whole, err := newMirror(t, Options{Reporter: wev}).Import(context.Background(), dir, mp(one.host))
	if err != nil || whole.Err() != nil {
		t.Fatal(err, whole.Err())
	}
	want := contents(t, one.host)

	byParts := newTestRegistry(t)
	pushed, excluded, notPushed := 0, 0, 0
	for _, w := range wev.warnings {
		if strings.Contains(w, "not pushed") {
			notPushed++
		}
	}
	for k := 0; k < 3; k++ {
		ev := &events{}
		s, err := newMirror(t, Options{Shard: Shard{k, 3}, Reporter: ev}).Import(context.Background(), dir, mp(byParts.host))
		if err != nil || s.Err() != nil {
			t.Fatal(err, s.Err())
		}
		for _, r := range s.Results {
			if !(Shard{k, 3}).Has(r.Job) {
				t.Errorf("part %d pushed %s", k, r.Source)
			}
		}
		for _, w := range ev.warnings {
			if strings.Contains(w, "not pushed") {
				excluded++
				if !(Shard{k, 3}).Has(Job{Source: src.host + "/team/app-3:1.0"}) {
					t.Errorf("part %d warns about another part's image: %s", k, w)
				}
			}
		}
		pushed += len(s.Results)
	}
	// The image excluded, and its two attachments, left out.
	if pushed != len(whole.Results) || excluded != notPushed || notPushed != 3 {
		t.Errorf("the parts pushed %d images and noticed %d not pushed, one run %d and %d (want 3)", pushed, excluded, len(whole.Results), notPushed)
	}
	if got := contents(t, byParts.host); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pushed by parts\n%v\none run\n%v", got, want)
	}

	// Archives written by the parts, each pushed whole.
	fromArchives := newTestRegistry(t)
	for k := 0; k < 3; k++ {
		file := filepath.Join(t.TempDir(), fmt.Sprintf("bundle-%d.tar", k))
		s, err := newMirror(t, Options{Shard: Shard{k, 3}}).ExportArchive(context.Background(), jobs, file, ArchiveOptions{})
		if err != nil || s.Err() != nil {
			t.Fatal(err, s.Err())
		}
		if s.Shard != (Shard{k, 3}) || s.Elsewhere+len(s.Results) != len(jobs) {
			t.Errorf("archive of part %d: shard %v, %d results and %d elsewhere of %d", k, s.Shard, len(s.Results), s.Elsewhere, len(jobs))
		}
		if s, err := newMirror(t, Options{}).ImportArchive(context.Background(), file, mp(fromArchives.host)); err != nil || s.Err() != nil {
			t.Fatal(err, s.Err())
		}
	}
	if got := contents(t, fromArchives.host); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("archives of the parts\n%v\none run\n%v", got, want)
	}
}

// TestShardCharts: a chart goes to the shard of its name, in a copy and
// when a layout is pushed; the other shards count it as elsewhere.
func TestShardCharts(t *testing.T) {
	dst := newTestRegistry(t)
	c := newChart(t, shopArchive(t), nil)
	job := ChartJob("charts/shop", c, dst.host+"/charts")
	dir := filepath.Join(t.TempDir(), "bundle")
	if s, err := newMirror(t, Options{}).Export(context.Background(), []Job{job}, dir); err != nil || s.Charts.Copied != 1 {
		t.Fatalf("export: %+v, %v", s.Charts, err)
	}
	want := ShardOf("shop", 3)
	for k := 0; k < 3; k++ {
		s := newMirror(t, Options{Shard: Shard{k, 3}}).Copy(context.Background(), []Job{job})
		imp, err := newMirror(t, Options{Shard: Shard{k, 3}}).Import(context.Background(), dir, mapper(t, rewrite.Config{Registry: dst.host + "/imported"}))
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []Summary{s, imp} {
			if err := got.Err(); err != nil {
				t.Fatal(err)
			}
			if k == want && (got.Charts.Copied != 1 || got.Elsewhere != 0) || k != want && (got.Charts.Total() != 0 || got.Elsewhere != 1) {
				t.Errorf("shard %d/3 (the chart's is %d): charts %+v, elsewhere %d", k, want, got.Charts, got.Elsewhere)
			}
		}
	}
	if head(t, dst.host+"/charts/shop:"+c.Tag()) == "" || head(t, dst.host+"/imported/charts/shop:"+c.Tag()) == "" {
		t.Error("the chart was not pushed by its shard")
	}
}

package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// TestMirrorShardFlag: values that are not a shard are refused before
// anything is read, with the flag, the value, what is wrong and the form
// wanted.
func TestMirrorShardFlag(t *testing.T) {
	for _, tc := range []struct{ value, reason string }{
		{"3/3", "the index 3 is not less than the count 3: the 3 shards are numbered 0 to 2"},
		{"5/3", "the index 5 is not less than the count 3"},
		{"0/0", "the count 0 is less than 1"},
		{"-1/3", "the index -1 is negative"},
		{"1/-3", "the count -3 is negative"},
		{"one/3", "the index one is not a number"},
		{"1/3.5", "the count 3.5 is not a number"},
		{"/3", "the index is missing"}, // $(JOB_COMPLETION_INDEX) unset
		{"2", "not of the form K/N"},
		{"1/ 3", `the count " 3" is not a number`},
	} {
		_, errOut, code := rehost(t, "nginx:1\n", "mirror", "--image-list", "-", "--dry-run", "--attachments", "none", "--shard", tc.value)
		want := "--shard " + tc.value + ": " + tc.reason
		if tc.value == "1/ 3" {
			want = `--shard "1/ 3": ` + tc.reason
		}
		if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "want K/N with K from 0 to N-1") {
			t.Errorf("--shard %q: exit %d, stderr %q; want %q and the form", tc.value, code, errOut, want)
		}
	}
	help, _, _ := rehost(t, "", "mirror", "--help")
	for _, want := range []string{"--shard K/N", "JOB_COMPLETION_INDEX", "Scaling out"} {
		if !strings.Contains(help, want) {
			t.Errorf("mirror --help does not mention %q", want)
		}
	}
}

// TestMirrorShardPlans: the plans and pins of the shards of a dry run
// are disjoint, and together the whole run's, line for line; every tag
// of a repository is in one shard; each summary says what it left to the
// others. No registry is asked (--attachments none, --pin with digests).
func TestMirrorShardPlans(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&in, "quay.io/team/app-%d:1.0\n", i)
		if i%4 == 0 {
			fmt.Fprintf(&in, "quay.io/team/app-%d:2.0\n", i)
		}
	}
	args := []string{"mirror", "--image-list", "-", "--registry", "sea.hub:5000", "--dry-run", "--attachments", "none", "--progress", "plain"}
	whole, errOut, code := rehost(t, in.String(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	const n = 3
	var lines []string
	repoShard := map[string]int{}
	for k := 0; k < n; k++ {
		out, errOut, code := rehost(t, in.String(), append(args, "--shard", fmt.Sprintf("%d/%d", k, n))...)
		if code != 0 {
			t.Fatalf("shard %d: exit %d: %s", k, code, errOut)
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			got = nil
		}
		for _, l := range got {
			repo, _, _ := strings.Cut(strings.TrimPrefix(l, "would copy "), ":")
			if s, ok := repoShard[repo]; ok && s != k {
				t.Errorf("%s in shards %d and %d", repo, s, k)
			}
			repoShard[repo] = k
		}
		if len(got) == 0 {
			t.Errorf("shard %d/%d plans nothing of 12 repositories", k, n)
		}
		lines = append(lines, got...)
		want := fmt.Sprintf("shard %d/%d: dry run: %d images would be copied, 0 failed; %d images and charts left to the other shards\n", k, n, len(got), 15-len(got))
		if errOut != want {
			t.Errorf("shard %d: stderr %q, want %q", k, errOut, want)
		}
	}
	sort.Strings(lines)
	wantLines := strings.Split(strings.TrimSuffix(whole, "\n"), "\n")
	sort.Strings(wantLines)
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") || len(lines) != 15 {
		t.Errorf("the shards' plans:\n%s\nthe whole run's:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
	if len(repoShard) != 12 {
		t.Errorf("%d repositories planned, want 12", len(repoShard))
	}

	// --pin: each shard's lines, sorted; merged, the whole run's.
	var pinned strings.Builder
	for i := 0; i < 9; i++ {
		fmt.Fprintf(&pinned, "quay.io/team/app-%d:1.0@sha256:%s\n", i, strings.Repeat(fmt.Sprint(i), 64))
	}
	pin := []string{"mirror", "--image-list", "-", "--registry", "sea.hub:5000", "--dry-run", "--pin", "--progress", "none"}
	wholePins, errOut, code := rehost(t, pinned.String(), pin...)
	if code != 0 {
		t.Fatalf("--pin: exit %d: %s", code, errOut)
	}
	var merged []string
	for k := 0; k < n; k++ {
		out, errOut, code := rehost(t, pinned.String(), append(pin, "--shard", fmt.Sprintf("%d/%d", k, n))...)
		if code != 0 {
			t.Fatalf("--pin shard %d: exit %d: %s", k, code, errOut)
		}
		if out != "" {
			ls := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if !sort.StringsAreSorted(ls) {
				t.Errorf("--pin shard %d: not sorted:\n%s", k, out)
			}
			merged = append(merged, ls...)
		}
	}
	sort.Strings(merged)
	if got := strings.Join(merged, "\n") + "\n"; got != wholePins || len(merged) != 9 {
		t.Errorf("the shards' pins:\n%s\nthe whole run's:\n%s", got, wholePins)
	}
}

package policy

import (
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/rehost/rehost/pkg/policy"
	"github.com/rehost/rehost/pkg/rewrite"
	"k8s.io/apiserver/pkg/admission"
)

// fuzzServers are the API servers of the fuzz target, one per config,
// started on first use in each fuzzing process.
var fuzzServers struct {
	sync.Mutex
	s map[int]*apiServer
	m map[int]*rewrite.Mapper
}

func fuzzServer(t *testing.T, i int) (*apiServer, *rewrite.Mapper) {
	fuzzServers.Lock()
	defer fuzzServers.Unlock()
	if fuzzServers.s == nil {
		fuzzServers.s, fuzzServers.m = map[int]*apiServer{}, map[int]*rewrite.Mapper{}
	}
	if s, ok := fuzzServers.s[i]; ok {
		return s, fuzzServers.m[i]
	}
	m, err := rewrite.NewMapper(configs[i].cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The servers outlive the test that starts them (t.Cleanup would stop
	// them): a testing.TB that never cleans up.
	s := newAPIServer(keep{t}, generate(t, configs[i].cfg, policy.Options{}))
	fuzzServers.s[i], fuzzServers.m[i] = s, m
	return s, m
}

type keep struct{ *testing.T }

func (keep) Cleanup(func()) {}

// FuzzPolicy: for any reference, and any of the configs, the generated
// MutatingAdmissionPolicy, run by the API server's admission plugin, gives
// a container the image rewrite.Mapper gives it, and leaves its result
// alone. Strings that are not UTF-8 are skipped: a Pod reaches the API
// server as JSON, which carries none.
func FuzzPolicy(f *testing.F) {
	for i, s := range hardCases {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, img string, cfg uint8) {
		if !utf8.ValidString(img) {
			t.Skip()
		}
		s, m := fuzzServer(t, int(cfg)%len(configs))
		got, _, err := s.admit(podOf("apps", []string{img, img, img}), admission.Create, nil)
		if err != nil {
			t.Fatalf("%q: %v", img, err)
		}
		w := want(m, img)
		for _, out := range imagesOf(got) {
			if out != w {
				t.Fatalf("%q [%s]: policy gives %q, rehost rewrite %q", img, configs[int(cfg)%len(configs)].name, out, w)
			}
		}
		if w != img {
			again, _, err := s.admit(got, admission.Create, nil)
			if err != nil || imagesOf(again)[0] != w {
				t.Fatalf("%q: second pass: %v, %v", img, err, imagesOf(again))
			}
		}
	})
}

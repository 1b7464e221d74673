package helm

import (
	"bytes"

	"github.com/rehost/rehost/pkg/manifest"
	"helm.sh/helm/v3/pkg/postrender"
)

// PostRendererName names the stream a PostRenderer rewrites in errors and
// in the image report.
const PostRendererName = "<helm post-render>"

// PostRenderer rewrites the images of the manifests Helm renders. Set it as
// the PostRenderer of action.Install or action.Upgrade to rewrite a release
// in process. Its method set is that of Helm 3's postrender.PostRenderer
// and of Helm 4's postrenderer.PostRenderer alike.
//
// Helm 3 passes only the release manifest through a post-renderer, never
// the hooks (pre-install Jobs, test Pods, ...): their images stay as
// written; render the chart with [Render] to rewrite hooks as well. Helm 4
// passes hooks too, each document with a postrenderer.helm.sh/postrender-filename
// annotation that comes back unchanged.
type PostRenderer struct {
	// Rewriter rewrites the manifests and collects their images; its
	// Images method lists what the post-renderer met.
	Rewriter *manifest.Rewriter
}

var _ postrender.PostRenderer = (*PostRenderer)(nil)

// Run implements postrender.PostRenderer: it returns the rendered manifests
// with every image rewritten.
func (p *PostRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	out := new(bytes.Buffer)
	out.Grow(in.Len() + in.Len()/16)
	if err := p.Rewriter.Rewrite(out, in, PostRendererName); err != nil {
		return nil, err
	}
	return out, nil
}

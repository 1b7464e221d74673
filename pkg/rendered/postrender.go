package rendered

import (
	"bytes"

	"github.com/rehost/rehost/pkg/manifest"
)

// PostRendererName names the stream a PostRenderer rewrites in errors and
// in the image report.
const PostRendererName = "<helm post-render>"

// PostRenderer rewrites the images of the manifests Helm renders. Set it as
// the PostRenderer of action.Install or action.Upgrade to rewrite a release
// in process. Its one method is that of Helm 3's postrender.PostRenderer
// (every Helm 3 release that has one, 3.9 as 3.22) and of Helm 4's
// postrenderer.PostRenderer, which it satisfies without importing Helm.
//
// Helm 3 passes only the release manifest through a post-renderer, never
// the hooks (pre-install Jobs, test Pods, ...): their images stay as
// written; render the chart (FromTemplates, or package helm's Render) to
// rewrite hooks as well. Helm 4 passes hooks too, each document with a
// postrenderer.helm.sh/postrender-filename annotation that comes back
// unchanged.
type PostRenderer struct {
	// Rewriter rewrites the manifests and collects their images; its
	// Images method lists what the post-renderer met.
	Rewriter *manifest.Rewriter
}

// Run returns the rendered manifests with every image rewritten.
func (p *PostRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	out := new(bytes.Buffer)
	out.Grow(in.Len() + in.Len()/16)
	if err := p.Rewriter.Rewrite(out, in, PostRendererName); err != nil {
		return nil, err
	}
	return out, nil
}

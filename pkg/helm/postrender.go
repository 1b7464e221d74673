package helm

import (
	"github.com/rehost/rehost/pkg/rendered"
	"helm.sh/helm/v3/pkg/postrender"
)

// PostRendererName names the stream a PostRenderer rewrites in errors and
// in the image report.
const PostRendererName = rendered.PostRendererName

// PostRenderer is [rendered.PostRenderer], the post-renderer of the core,
// which needs no Helm import: programs on another Helm version (sealer's
// 3.9) use it from there.
type PostRenderer = rendered.PostRenderer

var _ postrender.PostRenderer = (*PostRenderer)(nil)

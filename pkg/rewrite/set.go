package rewrite

import (
	"sort"
)

// Occurrence is one place an image was found, with its mapping.
type Occurrence struct {
	Mapping
	Location Location
}

// Image is one unique source image with its target and every place it occurs.
type Image struct {
	// Source is the fully qualified original, "docker.io/library/nginx:1.25".
	Source string `json:"source"`
	// Target is the fully qualified reference the cluster pulls.
	Target string `json:"target"`
	Action Action `json:"action"`
	// Count is how many times the image occurs.
	Count int `json:"count"`
	// Occurrences are the places it occurs: all of them, or only the first
	// when the set keeps first occurrences only.
	Occurrences []Location `json:"occurrences"`
}

// ImageSet collects mapped images. Its zero value is ready to use. It is not
// safe for concurrent use.
type ImageSet struct {
	// FirstOnly keeps only the first occurrence of each image (Count still
	// counts them all), so memory does not grow with the input for callers
	// that do not report every place.
	FirstOnly bool
	// NoCollisions records images without the collision check: for reports
	// of candidates that are not written anywhere.
	NoCollisions bool

	images map[string]*Image
	// bySource finds the image of a source Ref met before without building
	// its key: a document of many references adds each with no allocation.
	bySource map[Ref]*Image
	// owner remembers, per target repository, the first source repository
	// mapped there, to detect collisions.
	owner map[string]Occurrence
}

// Add records an occurrence. It returns a *CollisionError, and records
// nothing, when o's source repository maps to a target repository that
// another source repository already maps to.
func (s *ImageSet) Add(o Occurrence) error {
	if s.images == nil {
		s.images = map[string]*Image{}
		s.bySource = map[Ref]*Image{}
		s.owner = map[string]Occurrence{}
	}
	if img := s.bySource[o.Source]; img != nil && img.Action == o.Action && o.Target.isQualified(img.Target) {
		// The same mapping again: its collision check passed when the
		// image was first added, and its owner never changes.
		img.add(o.Location, s.FirstOnly)
		return nil
	}
	if o.Action == Rewritten && !s.NoCollisions {
		target := o.Target.RepositoryName()
		if first, ok := s.owner[target]; !ok {
			s.owner[target] = o
		} else if first.Source.RepositoryName() != o.Source.RepositoryName() {
			return &CollisionError{Target: target, First: first, Second: o}
		}
	}
	s.Record(o)
	return nil
}

// Record records an occurrence as Add does, without the collision check:
// for callers that list images and write nothing, to whom the
// *CollisionError of an Add is a warning and not a reason to drop the
// image.
func (s *ImageSet) Record(o Occurrence) {
	if s.images == nil {
		s.images = map[string]*Image{}
		s.bySource = map[Ref]*Image{}
		s.owner = map[string]Occurrence{}
	}
	key := o.Source.Qualified()
	img, ok := s.images[key]
	if !ok {
		img = &Image{Source: key, Target: o.Target.Qualified(), Action: o.Action}
		s.images[key] = img
	}
	s.bySource[o.Source] = img
	img.add(o.Location, s.FirstOnly)
}

func (img *Image) add(loc Location, firstOnly bool) {
	img.Count++
	if img.Count == 1 || !firstOnly {
		img.Occurrences = append(img.Occurrences, loc)
	}
}

// Len is the number of unique source images.
func (s *ImageSet) Len() int { return len(s.images) }

// Images returns the unique images sorted by source.
func (s *ImageSet) Images() []Image {
	out := make([]Image, 0, len(s.images))
	for _, img := range s.images {
		out = append(out, *img)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

// Sources returns every source image found, fully qualified, sorted and
// unique, whatever its mapping did: excluded images and images already in
// the target registry included.
func (s *ImageSet) Sources() []string {
	var out []string
	for _, img := range s.Images() {
		out = append(out, img.Source)
	}
	return out
}

// ToCache returns the images to cache in the target registry before the
// cluster pulls them, fully qualified, sorted and unique: the sources of
// the images that move there (Action Rewritten). Excluded images stay
// where they are, and images already in the target registry are cached
// already. It is the content of a sealer imageList file.
func (s *ImageSet) ToCache() []string {
	var out []string
	for _, img := range s.Images() {
		if img.Action == Rewritten {
			out = append(out, img.Source)
		}
	}
	return out
}

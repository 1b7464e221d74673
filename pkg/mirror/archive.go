package mirror

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/rehost/rehost/pkg/rewrite"
)

// ArchiveOptions configure ExportArchive.
type ArchiveOptions struct {
	// PartSize, when set, splits the archive into parts FILE.part000,
	// FILE.part001, … of at most PartSize bytes each (at least
	// MinPartSize), whose concatenation is the archive: for media that
	// limit a file's size (a DVD, FAT32's 4 GiB - 1 byte). 0 writes one
	// file, FILE.
	PartSize int64
	// Force replaces the files of an archive already at FILE (FILE,
	// FILE.sha256, its parts), which are removed before anything is
	// written; without it ExportArchive refuses to start (*ExistsError).
	Force bool
}

// ExportArchive writes the source image of each job, as Export would
// write it into a directory, as one tar archive at path (with
// ArchiveOptions.PartSize, as parts of it) and, last, the checksum file
// path+".sha256" in sha256sum's format listing the archive or every part
// by its name beside it: `sha256sum -c` checks it anywhere, and an
// archive without its checksum file is visibly incomplete. The archive
// holds exactly the layout Export writes for the same jobs into a new
// directory (tar -xf gives the same files, byte for byte): oci-layout
// first, the blobs/ directories, the blobs, and index.json last.
//
// The archive is planned, then written. First the jobs run as Export runs
// them, but their layers are not downloaded: each blob is recorded with
// its digest and size, and manifests, indexes and configs are kept (in
// memory, 32 MiB at most, then in a private file beside path, unlinked
// at once). Then the whole archive is known: its entries in a fixed order
// (images by source, charts by name and version; within an image blobs
// by digest, each blob once) and where each one begins. The files are
// created and the blobs downloaded, a few at once, each written straight
// at its place (in two parts when it crosses a boundary) and checked
// against its digest and size as it streams: every byte reaches the disk
// once, the disk used is the archive's size (a part, written at offsets,
// may be sparse until it is whole, never larger than its size), and the
// memory does not grow with the blobs' size. Each part, once whole, is
// hashed, synced and reported (PartReporter). The bytes are the same for
// the same images, whatever order the downloads end in: fixed entry
// order, modification time (the Unix epoch), modes (0644 and 0755),
// owner 0 without names.
//
// The Reporter sees each job start as it is planned; an image (or chart)
// is reported done, and counted as copied, once its blobs are in the
// archive, with the bytes downloaded for it. A job that fails is reported
// at once and does not stop the others (every failure is reported, and a
// blob that fails fails the images and attachments that need it).
//
// Nothing is overwritten: a file at path, path+".sha256" or a part fails
// with *ExistsError before anything is read, unless ArchiveOptions.Force.
// The archive is written only whole: when a job fails (see the Summary) or
// ctx ends, every file this run wrote is removed (the Summary says why).
// The returned error is about the archive itself. Options.PushRegistry does
// not apply: the archive records the targets, and pushes nothing.
func (m *Mirror) ExportArchive(ctx context.Context, jobs []Job, path string, o ArchiveOptions) (Summary, error) {
	if o.PartSize != 0 && o.PartSize < MinPartSize {
		return Summary{}, fmt.Errorf("part size %d bytes: want at least %d (1 MiB)", o.PartSize, MinPartSize)
	}
	dest := &layoutTarget{dest: "oci-archive:" + path}
	if m.opts.DryRun {
		return m.run(ctx, m.batch(m.exportTasks(jobs, dest), nil), nil), nil
	}
	if err := clearArchive(path, o.Force); err != nil {
		return Summary{}, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	dest.im = v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{}}
	dest.have = map[string]v1.Descriptor{}
	b := m.batch(m.exportTasks(jobs, dest), nil)
	p := newArchivePlan(m, dest, b.tasks, path, o.PartSize, cancel)
	defer p.close()
	dest.arc = p
	s := m.runTasks(ctx, b, p)
	err := p.place(ctx, &s)
	s = s.recount()
	s.Elapsed = time.Since(start)
	m.report(func(r Reporter) { r.End(s) })
	return s, m.secrets.safe(err)
}

// recount is s with its counts made again from its results.
func (s Summary) recount() Summary {
	out := Summary{Elapsed: s.Elapsed, ListedAttachments: s.ListedAttachments, DryRun: s.DryRun, Shard: s.Shard, Elsewhere: s.Elsewhere}
	for _, r := range s.Results {
		out.add(r)
	}
	return out
}

// clearArchive checks that no file of an archive is at path, or, with
// force, removes them (the checksum file first, so that an archive being
// replaced is never taken for whole).
func clearArchive(path string, force bool) error {
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: its folder %s is not a directory that exists", path, filepath.Dir(path))
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: a directory, not a file an archive can be written to", path)
	}
	var there []string
	for _, p := range []string{checksumName(path), path} {
		if _, err := os.Lstat(p); err == nil {
			there = append(there, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var parts []string
	for _, e := range entries {
		if _, ok := partNumber(e.Name(), filepath.Base(path)); ok {
			parts = append(parts, filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
	sort.Strings(parts)
	there = append(there, parts...)
	if len(there) == 0 {
		return nil
	}
	if !force {
		return &ExistsError{Paths: there}
	}
	for _, p := range there {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

// ImportArchive pushes every image of the archive at path into a
// registry, as Import pushes a layout: path is the archive, or the name
// its parts share (path.part000, …). First every file of the archive is
// checked against its checksum file path+".sha256" (PartReporter follows
// the check): a missing, truncated, reordered or altered part fails the
// run with a *PartError naming it (every such part, joined), a checksum
// file naming a file outside the archive's folder with a
// *ChecksumFileError, and nothing is pushed. A single file without a
// checksum file (a `docker save`, an archive made by hand) is read with a
// notice (Noticer) that only its blobs' digests check it; parts without
// one are refused. Then the archive is read in place, never extracted:
// its headers are walked once, and entries with unsafe names, links,
// devices, FIFOs, duplicate names or data past the end fail the run
// (*EntryError) before anything is pushed.
//
// An archive holding an OCI image layout (oci-layout, as ExportArchive
// writes it, or tar of an Export directory) is pushed as Import pushes
// it, with the same checks of every manifest, index, config and blob. An
// archive in the format `docker save` writes (manifest.json with
// RepoTags, as `crane pull --format tarball` writes it too) pushes each
// RepoTags entry to the target the mapper gives it; entries the mapping
// leaves where they are are reported as warnings and not pushed. A run
// that stopped resumes: what the target holds is skipped.
func (m *Mirror) ImportArchive(ctx context.Context, path string, mapper *rewrite.Mapper) (Summary, error) {
	files, notice, err := openArchive(ctx, path, func(p CheckProgress) {
		m.report(func(r Reporter) {
			if pr, ok := r.(PartReporter); ok {
				pr.CheckProgress(p)
			}
		})
	})
	if err != nil {
		return Summary{}, m.secrets.safe(err)
	}
	if notice != "" {
		m.notice(Notice{Msg: notice, Unchecked: path})
	}
	t, err := indexTar(path, files, files.size, files)
	if err != nil {
		files.Close()
		return Summary{}, m.secrets.safe(err)
	}
	switch {
	case t.has("oci-layout"):
		lr, ii, err := readLayout(t)
		if err != nil {
			return Summary{}, m.secrets.safe(err)
		}
		defer lr.Close()
		return m.importLayout(ctx, lr, ii, mapper, nil)
	case t.has("manifest.json"):
		defer t.Close()
		return m.importDocker(ctx, t, mapper)
	}
	t.Close()
	return Summary{}, fmt.Errorf("%s: neither an OCI image layout (no oci-layout entry) nor an archive of docker save (no manifest.json entry)", path)
}

// notice gives n to the Reporter, if it takes notices (Noticer), its
// message scrubbed.
func (m *Mirror) notice(n Notice) {
	n.Msg = m.secrets.scrub(n.Msg)
	m.report(func(r Reporter) {
		if nr, ok := r.(Noticer); ok {
			nr.Notice(n)
		}
	})
}

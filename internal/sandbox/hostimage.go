package sandbox

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// libraryDirs are where the dynamic loader looks for a library a program
// needs, as Debian's loader does with no /etc/ld.so.cache (a Docker guest
// has none).
var libraryDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// maxHostFiles bounds what one host image copies.
const maxHostFiles = 512

// hostFiles lists what a root made of programs holds: each program at the
// path given, and every shared library it needs (its ELF interpreter and
// its DT_NEEDED entries, and theirs), each at the canonical path of the
// folder the loader finds it in, under the name it is asked for. The
// answer maps a path in the image to the host file to copy there.
func hostFiles(programs []string) (map[string]string, error) {
	files := map[string]string{}
	todo := []string{}
	add := func(at, from string) error {
		if _, ok := files[at]; ok {
			return nil
		}
		if len(files) >= maxHostFiles {
			return fmt.Errorf("more than %d files", maxHostFiles)
		}
		real, err := filepath.EvalSymlinks(from)
		if err != nil {
			return err
		}
		files[at] = real
		todo = append(todo, real)
		return nil
	}
	for _, p := range programs {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return nil, fmt.Errorf("host program %q: not an absolute, clean path", p)
		}
		for _, own := range []string{"/proc", "/dev", "/sys", "/tmp", WorkDir} {
			if within(own, p) {
				return nil, fmt.Errorf("host program %s: in %s, which a guest has of its own, so the image's copy would be hidden", p, own)
			}
		}
		if err := add(p, p); err != nil {
			return nil, fmt.Errorf("host program: %w", err)
		}
	}
	for len(todo) > 0 {
		path := todo[0]
		todo = todo[1:]
		interp, needed, err := elfNeeds(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if interp != "" {
			dir, err := filepath.EvalSymlinks(filepath.Dir(interp))
			if err != nil {
				return nil, fmt.Errorf("%s: its interpreter: %w", path, err)
			}
			if err := add(filepath.Join(dir, filepath.Base(interp)), interp); err != nil {
				return nil, fmt.Errorf("%s: its interpreter: %w", path, err)
			}
		}
		for _, lib := range needed {
			found, err := findLibrary(lib)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if err := add(found, found); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return files, nil
}

// elfNeeds reads an ELF file's interpreter and the libraries it needs;
// a file that is not ELF (a script) needs nothing.
func elfNeeds(path string) (interp string, needed []string, err error) {
	f, err := elf.Open(path)
	var format *elf.FormatError
	if errors.As(err, &format) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
			if err != nil {
				return "", nil, err
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	needed, err = f.ImportedLibraries()
	return interp, needed, err
}

// findLibrary returns where the loader finds a library by its name: the
// folder's canonical path joined with the name.
func findLibrary(name string) (string, error) {
	if strings.Contains(name, "/") {
		return "", fmt.Errorf("library %q: a path, not a name", name)
	}
	for _, dir := range libraryDirs {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				return "", err
			}
			return filepath.Join(real, name), nil
		}
	}
	return "", fmt.Errorf("library %s: not found in %s", name, strings.Join(libraryDirs, ", "))
}

// usrLinks are the links of a merged /usr that a host image's root holds.
var usrLinks = []string{"bin", "lib", "lib64", "sbin"}

// EnsureHostImage builds, unless the daemon has it, an image FROM scratch
// made of host programs (the guest helper, node): each at its own path
// with the shared libraries it loads (hostFiles), and the links of a
// merged /usr; nothing else of the host's, nothing pulled. Its name holds
// a hash of what it holds, so a changed program makes another image. It
// returns the image's name.
func (r DockerRunner) EnsureHostImage(ctx context.Context, programs []string) (string, error) {
	files, err := hostFiles(programs)
	if err != nil {
		return "", fmt.Errorf("docker host image: %w", err)
	}
	paths := make([]string, 0, len(files))
	for at := range files {
		paths = append(paths, at)
	}
	slices.Sort(paths)
	sum := sha256.New()
	for _, at := range paths {
		f, err := os.Open(files[at])
		if err != nil {
			return "", fmt.Errorf("docker host image: %w", err)
		}
		fmt.Fprintf(sum, "%s\x00", at)
		_, err = io.Copy(sum, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("docker host image: %w", err)
		}
	}
	image := "zero-sandbox/host:" + hex.EncodeToString(sum.Sum(nil))[:16]
	if _, err := r.call(ctx, 30*time.Second, "image", "inspect", "--format", "{{.Id}}", image); err == nil {
		return image, nil
	}
	dir, err := os.MkdirTemp("", "zero-docker-host-image-")
	if err != nil {
		return "", fmt.Errorf("docker host image: %w", err)
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "root")
	for _, l := range usrLinks {
		if err := os.MkdirAll(filepath.Join(root, "usr", l), 0o755); err != nil {
			return "", fmt.Errorf("docker host image: %w", err)
		}
		if err := os.Symlink("usr/"+l, filepath.Join(root, l)); err != nil {
			return "", fmt.Errorf("docker host image: %w", err)
		}
	}
	for _, at := range paths {
		if err := copyHostFile(files[at], filepath.Join(root, resolveUnder(root, at))); err != nil {
			return "", fmt.Errorf("docker host image: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY root/ /\n"), 0o644); err != nil {
		return "", fmt.Errorf("docker host image: %w", err)
	}
	if _, err := r.callIn(ctx, dir, 5*time.Minute, "build", "-q", "-t", image, "."); err != nil {
		return "", fmt.Errorf("docker host image %s: %w", image, err)
	}
	return image, nil
}

// resolveUnder is path at as it lies in root: through root's merged /usr
// links (/lib64/x is usr/lib64/x).
func resolveUnder(root, at string) string {
	rel := strings.TrimPrefix(at, "/")
	first, rest, _ := strings.Cut(rel, "/")
	if slices.Contains(usrLinks, first) {
		return filepath.Join("usr", first, rest)
	}
	return rel
}

// copyHostFile copies a host file to dst, its folders made, executable.
func copyHostFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// hostImages are the host images this process made, by daemon and
// programs: each is built once.
var hostImages struct {
	sync.Mutex
	names map[string]string
}

// image is r.Image, or, when it is empty and r has Programs, the host
// image of them (built at the first use).
func (r DockerRunner) image(ctx context.Context) (string, error) {
	if r.Image != "" || len(r.Programs) == 0 {
		return r.Image, nil
	}
	key := r.Host + "\x00" + strings.Join(r.Programs, "\x00")
	hostImages.Lock()
	defer hostImages.Unlock()
	if name, ok := hostImages.names[key]; ok {
		return name, nil
	}
	name, err := r.EnsureHostImage(ctx, r.Programs)
	if err != nil {
		return "", err
	}
	if hostImages.names == nil {
		hostImages.names = map[string]string{}
	}
	hostImages.names[key] = name
	return name, nil
}

// DefaultRunners are a runner of every backend, strongest first, as Zero
// runs them here: Docker's, on the daemon at dockerHost ("" is the
// client's default), with an image made of programs (node, the guest
// helper) whose probe runs probe; runsc and bubblewrap with the host's
// /usr; and smolvm's, whose probe refuses (booting is not built).
func DefaultRunners(dockerHost string, probe []string, programs ...string) []Runner {
	return []Runner{
		SmolVMRunner{},
		DockerRunner{Host: dockerHost, Runtime: "runsc", Programs: programs, ProbeArgv: probe},
		RunscRunner{},
		DockerRunner{Host: dockerHost, Programs: programs, ProbeArgv: probe},
		BubblewrapRunner{},
	}
}

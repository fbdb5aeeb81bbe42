//go:build unix

package scaletest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// SeaweedFSVersion is the module version of github.com/seaweedfs/seaweedfs
// whose `weed` tools/s3/build.sh builds and the tests run.
const SeaweedFSVersion = "v0.0.0-20261109003541-7506e5f91cd6"

// GoFakeS3Version is the version of github.com/johannesboyne/gofakes3
// whose server program `tools/s3/build.sh gofakes3` builds.
const GoFakeS3Version = "v1.2.0"

// WeedBuildScript names the script that builds the S3 servers' programs.
const WeedBuildScript = "tools/s3/build.sh"

// S3Missing says how to build an S3 server for the tests that skip
// without one.
const S3Missing = "no S3 server built: run " + WeedBuildScript + " (SeaweedFS, 9 minutes or much more on a busy machine) or " +
	WeedBuildScript + " gofakes3 (about 2 minutes) for the S3 tests"

// GoFakeS3 returns the path of gofakes3's server program built by
// `tools/s3/build.sh gofakes3` (the user cache directory,
// gobreakpad/gofakes3/VERSION/gofakes3), or "" when it was not built.
func GoFakeS3() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	p := filepath.Join(dir, "gobreakpad", "gofakes3", GoFakeS3Version, "gofakes3")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// S3Built reports whether StartS3 has a server to run: SeaweedFS's weed
// (preferred) or gofakes3.
func S3Built() bool { return Weed() != "" || GoFakeS3() != "" }

// Weed returns the path of SeaweedFS's `weed` program: $GOBREAKPAD_WEED, or
// where tools/s3/build.sh leaves it (the user cache directory:
// $XDG_CACHE_HOME or ~/.cache, gobreakpad/seaweedfs/VERSION/weed), or ""
// when it was not built. Tests skip without it, naming the script: the
// build takes about 9 minutes, so it is never started by a test.
func Weed() string {
	if p := os.Getenv("GOBREAKPAD_WEED"); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	p := filepath.Join(dir, "gobreakpad", "seaweedfs", SeaweedFSVersion, "weed")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// S3Server is an S3-compatible server on loopback ports storing under a
// directory: SeaweedFS (`weed server` with its master, volume server, filer
// and S3 gateway in one process), whose S3 gateway takes one identity,
// AccessKey and SecretKey (random), with every right; or, when only it is
// built, gofakes3's server program with its bolt backend (a database file:
// it survives kill -9), which checks no signatures (Authenticates false).
type S3Server struct {
	// Endpoint is the S3 gateway's URL (http://127.0.0.1:PORT).
	Endpoint             string
	AccessKey, SecretKey string
	// Kind is "SeaweedFS" or "gofakes3"; Authenticates whether the server
	// refuses requests not signed with AccessKey and SecretKey.
	Kind          string
	Authenticates bool
	bin, dir, log string
	args          []string
	health        []string // URLs answering once the parts are up
	child
}

// StartS3 starts a SeaweedFS server storing under dir (created) and waits
// until its parts answer (or ctx ends).
func StartS3(ctx context.Context, dir string) (*S3Server, error) {
	bin, kind := Weed(), "SeaweedFS"
	if bin == "" {
		bin, kind = GoFakeS3(), "gofakes3"
	}
	if bin == "" {
		return nil, fmt.Errorf("scaletest: %s", S3Missing)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	var ports [8]int
	for i := range ports {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	key := make([]byte, 20)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	s := &S3Server{
		Endpoint:  fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		AccessKey: "GBPTEST" + hex.EncodeToString(key[:6]),
		SecretKey: hex.EncodeToString(key[6:]),
		Kind:      kind,
		bin:       bin,
		dir:       dir,
		log:       filepath.Join(dir, kind+".log"),
	}
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	if kind == "gofakes3" {
		s.args = []string{"-host", "127.0.0.1:" + p(0), "-backend", "bolt", "-bolt.db", filepath.Join(dir, "data", "s3.db")}
		if err := s.start(); err != nil {
			return nil, err
		}
		if err := s.WaitReady(ctx); err != nil {
			s.Stop()
			return nil, err
		}
		return s, nil
	}
	s.Authenticates = true
	s.args = []string{"server",
		"-dir=" + filepath.Join(dir, "data"),
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port=" + p(1), "-master.port.grpc=" + p(2),
		"-master.volumeSizeLimitMB=256", "-master.telemetry=false",
		"-volume.port=" + p(3), "-volume.port.grpc=" + p(4), "-volume.max=32",
		// No 10 s pause between the volume server's last heartbeat and its
		// stop (weed's default, for clusters whose clients must learn of
		// it first): this server has no other clients, and Stop would
		// otherwise wait out the 10 s and kill it.
		"-volume.preStopSeconds=0",
		"-filer", "-filer.port=" + p(5), "-filer.port.grpc=" + p(6),
		"-filer.localSocket=" + filepath.Join(dir, "filer.sock"),
		"-s3", "-s3.port=" + p(0), "-s3.port.grpc=" + p(7),
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.localSocket=" + filepath.Join(dir, "s3.sock"),
	}
	s.health = []string{
		"http://127.0.0.1:" + p(1) + "/healthz",
		"http://127.0.0.1:" + p(3) + "/healthz",
		"http://127.0.0.1:" + p(5) + "/healthz",
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	if err := s.WaitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *S3Server) start() error {
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.dir
	// Only the identity below: none of the caller's AWS settings.
	cmd.Env = []string{"HOME=" + s.dir, "PATH=/usr/bin:/bin", "TMPDIR=" + s.dir,
		"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = ProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("scaletest: start %s: %w", s.Kind, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	return nil
}

// WaitReady waits until the master, the volume server and the filer
// answer their health checks and the S3 gateway answers HTTP.
func (s *S3Server) WaitReady(ctx context.Context) error {
	c := &http.Client{Timeout: 2 * time.Second}
	for {
		err := s.ready(ctx, c)
		if err == nil {
			return nil
		}
		if !s.Running() {
			return fmt.Errorf("scaletest: %s exited (log: %s): %w", s.Kind, s.log, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("scaletest: %s not ready (log: %s): %w", s.Kind, s.log, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *S3Server) ready(ctx context.Context, c *http.Client) error {
	for _, u := range append(s.health, s.Endpoint+"/") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		// The S3 gateway answers an unsigned request (SeaweedFS: 403): it
		// is up.
		if u != s.Endpoint+"/" && resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", u, resp.Status)
		}
	}
	return nil
}

// Kill stops the server with SIGKILL (kill -9) and waits for it.
func (s *S3Server) Kill() { s.signal(syscall.SIGKILL) }

// Restart starts the server again (after Kill), on the same ports and
// storage, and waits until it is ready.
func (s *S3Server) Restart(ctx context.Context) error {
	if !s.Running() {
		if err := s.start(); err != nil {
			return err
		}
	}
	return s.WaitReady(ctx)
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) by its pid.
func (s *S3Server) Stop() { s.signal(syscall.SIGTERM) }

// Log is the path of the server's log.
func (s *S3Server) Log() string { return s.log }

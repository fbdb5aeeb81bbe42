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
	"sync"
	"syscall"
	"time"
)

// SeaweedFSVersion is the module version of github.com/seaweedfs/seaweedfs
// whose `weed` tools/s3/build.sh builds and the tests run.
const SeaweedFSVersion = "v0.0.0-20261109003541-7506e5f91cd6"

// WeedBuildScript names the script that builds Weed's program.
const WeedBuildScript = "tools/s3/build.sh"

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

// S3Server is a SeaweedFS server (`weed server` with its master, volume
// server, filer and S3 gateway in one process) on loopback ports, storing
// under a directory: a real S3-compatible object store. Its S3 gateway
// takes one identity, AccessKey and SecretKey (random), with every right.
type S3Server struct {
	// Endpoint is the S3 gateway's URL (http://127.0.0.1:PORT).
	Endpoint             string
	AccessKey, SecretKey string
	bin, dir, log        string
	args                 []string
	health               []string // URLs answering once the parts are up
	mu                   sync.Mutex
	cmd                  *exec.Cmd
	done                 chan struct{}
}

// StartS3 starts a SeaweedFS server storing under dir (created) and waits
// until its parts answer (or ctx ends).
func StartS3(ctx context.Context, dir string) (*S3Server, error) {
	bin := Weed()
	if bin == "" {
		return nil, fmt.Errorf("scaletest: SeaweedFS's weed is not built (run %s)", WeedBuildScript)
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
		bin:       bin,
		dir:       dir,
		log:       filepath.Join(dir, "weed.log"),
	}
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	s.args = []string{"server",
		"-dir=" + filepath.Join(dir, "data"),
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port=" + p(1), "-master.port.grpc=" + p(2),
		"-master.volumeSizeLimitMB=256", "-master.telemetry=false",
		"-volume.port=" + p(3), "-volume.port.grpc=" + p(4), "-volume.max=32",
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
		return fmt.Errorf("scaletest: start weed: %w", err)
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
			return fmt.Errorf("scaletest: weed exited (log: %s): %w", s.log, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("scaletest: weed not ready (log: %s): %w", s.log, err)
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
		// The S3 gateway answers an unsigned request 403: it is up.
		if u != s.Endpoint+"/" && resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", u, resp.Status)
		}
	}
	return nil
}

// Running reports whether the server's process runs.
func (s *S3Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Pid is the server's process id (0 when it is not running).
func (s *S3Server) Pid() int {
	if !s.Running() {
		return 0
	}
	return s.cmd.Process.Pid
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

func (s *S3Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

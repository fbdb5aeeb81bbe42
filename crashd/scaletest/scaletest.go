//go:build unix

package scaletest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSServer returns the path of the nats-server program, or "" when it is
// not installed (apt-get install nats-server).
func NATSServer() string {
	for _, p := range []string{"/usr/sbin/nats-server", "/usr/bin/nats-server"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	return ""
}

// FreePort returns a TCP port of 127.0.0.1 free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Node is one nats-server of a Cluster.
type Node struct {
	Name       string
	ClientURL  string
	clusterURL string
	conf       string
	log        string
	child
}

// Cluster is a running cluster of nats-server processes.
type Cluster struct {
	Nodes []*Node
	bin   string
}

// StartNATS starts an n-node nats-server cluster with JetStream (file
// storage under dir), on loopback ports, and waits until JetStream has a
// meta leader (or ctx ends). One node is a server alone (no cluster:
// JetStream in a cluster of one waits for peers for ever).
func StartNATS(ctx context.Context, dir string, n int) (*Cluster, error) {
	bin := NATSServer()
	if bin == "" {
		return nil, errors.New("scaletest: nats-server is not installed")
	}
	c := &Cluster{bin: bin}
	var routes []string
	for i := range n {
		cp, err := FreePort()
		if err != nil {
			return nil, err
		}
		rp, err := FreePort()
		if err != nil {
			return nil, err
		}
		name := "n" + strconv.Itoa(i+1)
		c.Nodes = append(c.Nodes, &Node{Name: name, ClientURL: fmt.Sprintf("nats://127.0.0.1:%d", cp),
			clusterURL: fmt.Sprintf("127.0.0.1:%d", rp)})
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", rp))
	}
	for _, nd := range c.Nodes {
		store := filepath.Join(dir, nd.Name)
		if err := os.MkdirAll(store, 0o755); err != nil {
			return nil, err
		}
		conf := fmt.Sprintf(`server_name: %s
listen: %s
jetstream { store_dir: %q, max_memory_store: 64MB, max_file_store: 8GB }
`, nd.Name, strings.TrimPrefix(nd.ClientURL, "nats://"), store)
		if n > 1 {
			conf += fmt.Sprintf(`cluster {
  name: scaletest
  listen: %s
  routes: [%s]
}
`, nd.clusterURL, strings.Join(routes, ", "))
		}
		nd.conf = filepath.Join(dir, nd.Name+".conf")
		nd.log = filepath.Join(dir, nd.Name+".log")
		if err := os.WriteFile(nd.conf, []byte(conf), 0o644); err != nil {
			return nil, err
		}
		if err := c.start(nd); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(nd *Node) error {
	logf, err := os.OpenFile(nd.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, "-c", nd.conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = ProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("scaletest: start nats-server %s: %w", nd.Name, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	nd.mu.Lock()
	nd.cmd, nd.done = cmd, done
	nd.mu.Unlock()
	return nil
}

// URL is the cluster's client URLs, comma-separated (as --nats takes them).
func (c *Cluster) URL() string {
	var u []string
	for _, nd := range c.Nodes {
		u = append(u, nd.ClientURL)
	}
	return strings.Join(u, ",")
}

// WaitReady waits until every running node answers and JetStream answers
// an account request.
func (c *Cluster) WaitReady(ctx context.Context) error {
	for {
		err := c.ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("scaletest: nats cluster not ready: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Cluster) ready(ctx context.Context) error {
	for _, nd := range c.Nodes {
		if !nd.Running() {
			continue
		}
		nc, err := nats.Connect(nd.ClientURL, nats.Timeout(time.Second))
		if err != nil {
			return err
		}
		js, err := jetstream.New(nc)
		if err == nil {
			actx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err = js.AccountInfo(actx)
			cancel()
		}
		nc.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", nd.Name, err)
		}
	}
	return nil
}

// RouteURL is the node's cluster (route) URL.
func (nd *Node) RouteURL() string { return "nats-route://" + nd.clusterURL }

// Kill stops node i with SIGKILL and waits for it.
func (c *Cluster) Kill(i int) {
	c.Nodes[i].signal(syscall.SIGKILL)
}

// Restart starts node i again (after Kill), on the same ports and storage.
func (c *Cluster) Restart(i int) error {
	if c.Nodes[i].Running() {
		return nil
	}
	return c.start(c.Nodes[i])
}

// Stop stops every node (SIGTERM, then SIGKILL after 10 s) by its pid.
func (c *Cluster) Stop() {
	for _, nd := range c.Nodes {
		nd.signal(syscall.SIGTERM)
	}
}

// PostgresBin returns the directory of PostgreSQL's server programs
// (initdb, pg_ctl), or "" when they are not installed (apt-get install
// postgresql).
func PostgresBin() string {
	for _, v := range []string{"17", "16", "15", "14", "13"} {
		d := "/usr/lib/postgresql/" + v + "/bin"
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// Postgres is a PostgreSQL instance in a temporary directory.
type Postgres struct {
	// URL is the postgres:// URL of its database "crashd" (user crashd,
	// trust authentication on 127.0.0.1).
	URL  string
	dir  string
	bin  string
	port int
	as   string // the user it runs as ("" : the caller)
}

// StartPostgres creates a PostgreSQL cluster under dir (initdb), starts it
// on a loopback port (pg_ctl; as the postgres user when the caller is
// root: PostgreSQL refuses to run as root) and creates the database
// crashd. opts are extra server settings (-c name=value).
func StartPostgres(ctx context.Context, dir string, opts ...string) (*Postgres, error) {
	bin := PostgresBin()
	if bin == "" {
		return nil, errors.New("scaletest: PostgreSQL is not installed")
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p := &Postgres{dir: dir, bin: bin, port: port}
	if os.Geteuid() == 0 {
		p.as = "postgres"
		u, err := user.Lookup(p.as)
		if err != nil {
			return nil, fmt.Errorf("scaletest: running as root, PostgreSQL needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		// The path to dir must be searchable by postgres.
		for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
				_ = os.Chmod(d, st.Mode().Perm()|0o011)
			}
		}
	}
	if out, err := p.run(ctx, filepath.Join(bin, "initdb"), "-D", p.data(), "-A", "trust", "-U", "crashd", "--locale=C.UTF-8", "-E", "UTF8"); err != nil {
		return nil, fmt.Errorf("scaletest: initdb: %w\n%s", err, out)
	}
	conf := fmt.Sprintf("listen_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nmax_connections = 200\n", port, dir)
	for _, o := range opts {
		conf += o + "\n"
	}
	f, err := os.OpenFile(filepath.Join(p.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(conf)
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	if out, err := p.run(ctx, filepath.Join(bin, "createdb"), "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "crashd", "crashd"); err != nil {
		p.Stop()
		return nil, fmt.Errorf("scaletest: createdb: %w\n%s", err, out)
	}
	p.URL = fmt.Sprintf("postgres://crashd@127.0.0.1:%d/crashd", port)
	return p, nil
}

// Dir is the instance's directory.
func (p *Postgres) Dir() string { return p.dir }

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

func (p *Postgres) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if p.as != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", p.as, "--", prog}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, prog, args...)
	}
	cmd.Dir = p.dir
	return cmd.CombinedOutput()
}

// Start starts the server (pg_ctl start -w).
func (p *Postgres) Start(ctx context.Context) error {
	if out, err := p.run(ctx, filepath.Join(p.bin, "pg_ctl"), "-D", p.data(), "-l", filepath.Join(p.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("scaletest: pg_ctl start: %w\n%s", err, out)
	}
	return nil
}

// Restart restarts the server with pg_ctl's immediate mode (no clean
// shutdown: the connections are cut, the server recovers from its WAL).
func (p *Postgres) Restart(ctx context.Context) error {
	if out, err := p.run(ctx, filepath.Join(p.bin, "pg_ctl"), "-D", p.data(), "-m", "immediate", "-w", "-t", "60", "restart", "-l", filepath.Join(p.dir, "log")); err != nil {
		return fmt.Errorf("scaletest: pg_ctl restart: %w\n%s", err, out)
	}
	return nil
}

// Pid is the postmaster's process id (0 when it does not run).
func (p *Postgres) Pid() int {
	b, err := os.ReadFile(filepath.Join(p.data(), "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	n, _ := strconv.Atoi(strings.TrimSpace(line))
	return n
}

// Stop stops the server (pg_ctl stop -m fast; the postmaster's pid killed
// if that fails).
func (p *Postgres) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.run(ctx, filepath.Join(p.bin, "pg_ctl"), "-D", p.data(), "-m", "fast", "-w", "stop"); err != nil {
		if pid := p.Pid(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// child is a server process the kit started: its command, closed done
// when it has exited, and the mutex guarding both across restarts.
type child struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Running reports whether the process runs.
func (c *child) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Pid is the process id (0 when it is not running).
func (c *child) Pid() int {
	if !c.Running() {
		return 0
	}
	return c.cmd.Process.Pid
}

// signal sends sig to the process and waits for it to exit, killing it
// (SIGKILL) after 10 s.
func (c *child) signal(sig syscall.Signal) {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
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

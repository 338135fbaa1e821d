package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

const rlimitNproc = unix.RLIMIT_NPROC

// joinCgroups moves this process into each v1 cgroup dir.
func joinCgroups(dirs []string) error {
	pid := strconv.Itoa(os.Getpid())
	for _, dir := range dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(pid), 0); err != nil {
			return fmt.Errorf("join the cgroup %s: %w", dir, err)
		}
	}
	return nil
}

// loopbackUp brings up lo, the only interface of a new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring the loopback up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring the loopback up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring the loopback up: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring the loopback up: %w", err)
	}
	return nil
}

// ruleset is the Landlock configuration and rules of a spec: files confined to Read and
// Write where it says so, TCP denied where it says so, and in both cases the abstract
// sockets and signals of processes outside the sandbox out of reach.
func ruleset(s shimSpec) (landlock.Config, []landlock.Rule) {
	var cfg landlock.Config
	var rules []landlock.Rule
	if s.Landlock {
		cfg.HandledAccessFS = landlock.V7.HandledAccessFS
		rules = append(rules, pathRules(s.Read, false)...)
		rules = append(rules, pathRules(s.Write, true)...)
	}
	if s.NoTCP {
		cfg.HandledAccessNet = landlock.V7.HandledAccessNet
	}
	if s.Landlock || s.NoTCP {
		cfg.Scoped = landlock.V7.Scoped
	}
	// Denials go to the kernel's audit log (ABI 7), the exec'd command's included.
	return cfg.BestEffort().EnableLoggingForSubprocesses(), rules
}

// pathRules grants read (and execute), or read and write, under each path: directory
// rights to directories, file rights to the rest; missing paths are skipped.
func pathRules(paths []string, write bool) []landlock.Rule {
	var dirs, files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	var out []landlock.Rule
	if write {
		if len(dirs) > 0 {
			out = append(out, landlock.RWDirs(dirs...).IgnoreIfMissing())
		}
		if len(files) > 0 {
			out = append(out, landlock.RWFiles(files...).IgnoreIfMissing())
		}
		return out
	}
	if len(dirs) > 0 {
		out = append(out, landlock.RODirs(dirs...).IgnoreIfMissing())
	}
	if len(files) > 0 {
		out = append(out, landlock.PathAccess(landlock.AccessFSSet(llsyscall.AccessFSExecute|llsyscall.AccessFSReadFile), files...).IgnoreIfMissing())
	}
	return out
}

// restrictThread sets no_new_privs and the spec's Landlock domain on the calling thread,
// which is about to exec.
func restrictThread(s shimSpec) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	cfg, rules := ruleset(s)
	if !s.Landlock && !s.NoTCP {
		return nil
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		return nil // no Landlock here: Probe said so
	}
	defer unix.Close(fd)
	if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// RestrictSelf bounds the calling process and all its threads, for a process that is
// already the node's binary (a code-mode worker): no_new_privs; Landlock denying every
// file but p.Read and p.Write as given (absolute paths, no defaults added: a Go program
// that has started needs no file), and with p.Network "none" every TCP bind and connect;
// the open-files rlimit of p.Files. Memory, cpu and pids need a cgroup, which a process
// cannot put itself under: start it with Command or package proc's Config.Sandbox.
//
// On a machine without Landlock the files and TCP are left open and the result says so
// (Paths and Network empty); no_new_privs and rlimits hold everywhere on Linux.
func RestrictSelf(p Policy) (Enforcement, error) {
	e := Enforcement{NoNewPrivs: "prctl"}
	if p.Files > 0 {
		lim := unix.Rlimit{Cur: uint64(p.Files), Max: uint64(p.Files)}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			return e, fmt.Errorf("set the open-files rlimit to %d: %w", p.Files, err)
		}
		e.Files = "rlimit"
	}
	if err := llsyscall.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return e, fmt.Errorf("set no_new_privs: %w", err)
	}
	s := shimSpec{Landlock: true, Read: p.Read, Write: p.Write, NoTCP: p.NoNetwork()}
	cfg, rules := ruleset(s)
	if err := cfg.Restrict(rules...); err != nil {
		return e, fmt.Errorf("landlock: %w", err)
	}
	if abi, _ := llsyscall.LandlockGetABIVersion(); abi > 0 {
		e.Paths = "landlock ABI " + strconv.Itoa(abi)
		if p.NoNetwork() && abi >= 4 {
			e.Network = "landlock (TCP only)"
		}
	}
	return e, nil
}

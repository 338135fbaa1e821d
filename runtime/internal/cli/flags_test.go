package cli

import (
	"io"
	"strings"
	"testing"
	"time"
)

// The audit log's bounds: defaults that fit one machine, sizes with units, and flags that
// mean nothing without the one they shape refused with the fix.
func TestAuditFlags(t *testing.T) {
	base := []string{"--bundles", "b"}
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string
		check   func(*serveFlags) bool
	}{
		{"defaults", []string{"--audit", "a.jsonl"}, "", func(f *serveFlags) bool {
			return f.auditArgsMax == 64<<10 && f.auditMaxSize == 100<<20 && f.auditKeep == 5
		}},
		{"set", []string{"--audit", "a.jsonl", "--audit-args", "--audit-args-max", "1MiB", "--audit-max-size", "10MiB", "--audit-keep", "2"}, "", func(f *serveFlags) bool {
			return f.auditArgsMax == 1<<20 && f.auditMaxSize == 10<<20 && f.auditKeep == 2
		}},
		{"size without --audit", []string{"--audit-max-size", "1MiB"}, "go with --audit FILE", nil},
		{"keep without --audit", []string{"--audit-keep", "3"}, "go with --audit FILE", nil},
		{"args bound without --audit-args", []string{"--audit", "a.jsonl", "--audit-args-max", "1MiB"}, "goes with --audit-args", nil},
		{"no files kept", []string{"--audit", "a.jsonl", "--audit-keep", "0"}, "--audit-keep 0: want a positive number", nil},
		{"a size of nothing", []string{"--audit", "a.jsonl", "--audit-max-size", "0"}, "want a positive size", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseServe(append(base, tt.args...), io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(f) {
				t.Errorf("flags %+v", f)
			}
		})
	}
}

// The result bounds: defaults, sizes with units, 0 for whole results, and a budget too small
// to hold a cut result's note refused.
func TestResultFlags(t *testing.T) {
	f, err := parseServe([]string{"--bundles", "b"}, io.Discard)
	if err != nil || f.results.maxBytes.byteSize != 100<<10 || f.results.clientBytes != 32<<20 || f.results.storeBytes != 128<<20 || f.results.ttl != time.Hour {
		t.Errorf("defaults: %+v, %v", f.results, err)
	}
	if f, err := parseServe([]string{"--bundles", "b", "--max-result-bytes", "0"}, io.Discard); err != nil || f.results.bounds().MaxBytes != 0 {
		t.Errorf("--max-result-bytes 0: %v", err)
	}
	if _, err := parseServe([]string{"--bundles", "b", "--max-result-bytes", "1KiB"}, io.Discard); err == nil || !strings.Contains(err.Error(), "at least 4096") {
		t.Errorf("--max-result-bytes 1KiB: %v, want it refused", err)
	}
}

func TestOAuthRequireATJWTFlag(t *testing.T) {
	f, err := parseServe([]string{"--bundles", "b", "--http", "127.0.0.1:0", "--oauth-issuer", "https://id.example.com/", "--oauth-require-at-jwt"}, io.Discard)
	if err != nil || !f.oauthRequireATJWT {
		t.Errorf("with --oauth-issuer: %+v, %v", f, err)
	}
	if _, err := parseServe([]string{"--bundles", "b", "--oauth-require-at-jwt"}, io.Discard); err == nil || !strings.Contains(err.Error(), "go with --oauth-issuer") {
		t.Errorf("without --oauth-issuer: %v", err)
	}
}

func TestByteSizeString(t *testing.T) {
	for _, tt := range []struct {
		n    byteSize
		want string
	}{{16 << 20, "16MiB"}, {64 << 10, "64KiB"}, {2 << 30, "2GiB"}, {1500, "1500"}, {1 << 20 * 3 / 2, "1536KiB"}} {
		if got := tt.n.String(); got != tt.want {
			t.Errorf("%d: %q, want %q", int64(tt.n), got, tt.want)
		}
		var back byteSize
		if err := back.Set(tt.n.String()); err != nil || back != tt.n {
			t.Errorf("%q read back as %d (%v), want %d", tt.n.String(), back, err, tt.n)
		}
	}
}

func TestRunWorkerFlags(t *testing.T) {
	f, err := parseServe([]string{"--bundles", "b"}, io.Discard)
	if c := f.runWorker.config(); err != nil || c.Off || c.MaxMemory != 256<<20 {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	f, err = parseServe([]string{"--bundles", "b", "--run-worker=off", "--run-max-memory", "1GiB"}, io.Discard)
	if c := f.runWorker.config(); err != nil || !c.Off || c.MaxMemory != 1<<30 {
		t.Errorf("--run-worker=off --run-max-memory 1GiB: %+v, %v", c, err)
	}
	for _, args := range [][]string{{"--run-worker", "maybe"}, {"--run-max-memory", "16MiB"}} {
		if _, err := parseServe(append([]string{"--bundles", "b"}, args...), io.Discard); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: %v, want it refused naming %s", args, err, args[0])
		}
	}
}

package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/testenv"

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/shellquote"
)

// TestMetadataOutside: chmod, utime and xattr changes (which Landlock does
// not mediate) fail outside the writable roots on every backend, by path
// and through a descriptor opened for reading, asserted on the host; the
// landlock backend's read-only mount view still lets them through inside
// the project and /tmp, and without a mount namespace seccomp denies them
// everywhere, as doctor says.
func TestMetadataOutside(t *testing.T) {
	testenv.Slow(t)
	variants := []string{BackendBwrap, BackendBwrap + perCommand, BackendLandlock, BackendLandlock + perCommand, BackendLandlock + "/no-userns"}
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			noNS := false
			if b, ok := strings.CutSuffix(v, "/no-userns"); ok {
				v, noNS = b, true
				noUserNamespaces = true
				t.Cleanup(func() { noUserNamespaces = false })
			}
			sb, proj := openTest(t, v, nil)
			s := sb.(*instance)
			outside := filepath.Join(filepath.Dir(proj), "outside.txt")
			os.WriteFile(outside, []byte("x"), 0o600)
			os.WriteFile(filepath.Join(proj, "run.sh"), []byte("#!/bin/sh\necho ran-inside\n"), 0o644)
			ctx := context.Background()
			r, err := sb.Run(ctx, Cmd{Script: shellquote.Quote(s.helper) + " " + inner.ProbeArg + " meta " + shellquote.Quote(outside) + "; " +
				shellquote.Quote(s.helper) + " " + inner.ProbeArg + " meta .git/config"})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(r.Output, []byte("denied:")) || bytes.Contains(r.Output, []byte("ESCAPED")) {
				t.Errorf("the probe escaped or did not run: %s", r.Output)
			}
			for _, p := range []string{outside, filepath.Join(proj, ".git", "config")} {
				var st unix.Stat_t
				unix.Stat(p, &st)
				if st.Mode&0o777 == 0o777 || st.Mtim.Sec == 1 {
					t.Errorf("%s changed on the host: mode %o mtime %d", p, st.Mode&0o7777, st.Mtim.Sec)
				}
				if _, err := unix.Getxattr(p, "user.harness", nil); err == nil {
					t.Errorf("%s gained an xattr on the host", p)
				}
			}
			// Inside the writable roots the same calls work, except where
			// seccomp denies them everywhere.
			r, err = sb.Run(ctx, Cmd{Script: "chmod +x run.sh && ./run.sh && touch -d @5 run.sh && t=\"${TMPDIR:-/tmp}/m\" && echo > \"$t\" && chmod 700 \"$t\" && echo meta-inside-ok"})
			if err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			unix.Stat(filepath.Join(proj, "run.sh"), &st)
			inside := bytes.Contains(r.Output, []byte("meta-inside-ok")) && st.Mode&0o100 != 0 && st.Mtim.Sec == 5
			if noNS {
				if inside || st.Mode&0o100 != 0 {
					t.Errorf("seccomp should deny chmod without a mount namespace: %s", r.Output)
				}
				return
			}
			if !inside {
				t.Errorf("chmod or touch inside the project failed: mode %o mtime %d: %s", st.Mode&0o7777, st.Mtim.Sec, r.Output)
			}
		})
	}
}

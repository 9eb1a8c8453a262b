package testenv

import (
	"fmt"
	"os/exec"
	"strings"
)

// WithoutUserns returns the command line that runs argv on what is, as
// far as the sandbox can tell, a machine without user namespaces: inside
// a user namespace of its own (uid 0 there, mapped to the caller) whose
// user.max_user_namespaces is 0, so it may create none. The sysctl is per
// user namespace and only this one's is written; the host's is untouched.
func WithoutUserns(argv ...string) []string {
	return append([]string{"unshare", "--user", "--map-root-user", "sh", "-c",
		`echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh"}, argv...)
}

// WithoutUsernsUnavailable says why WithoutUserns cannot run here (no
// unshare, or no user namespace to create), or returns nil. A test that
// needs it calls Missing(t, Userns, err.Error()) on an error.
func WithoutUsernsUnavailable() error {
	argv := WithoutUserns("true")
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv[:3], " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

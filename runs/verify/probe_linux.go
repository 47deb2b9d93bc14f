//go:build linux

package verify

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// probeArgs are the namespaces every confined check gets: a probe with
// them fails where user namespaces are blocked (Ubuntu 24.04's AppArmor
// default, a container's seccomp profile) as the check would.
var probeArgs = []string{"--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
	"--ro-bind", "/", "/", "--die-with-parent", "--", "/bin/sh", "-c", ":"}

// probe finds bubblewrap and tries its namespaces: problem and fix say
// what stops confinement ("" when nothing does).
func probe(ctx context.Context) (bwrap, problem, fix string) {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return "", "bubblewrap (bwrap) is not installed", "install it (apt-get install bubblewrap, dnf install bubblewrap)"
	}
	out, err := exec.CommandContext(ctx, bw, probeArgs...).CombinedOutput()
	if err == nil {
		return bw, "", ""
	}
	line := firstLine(string(out), err)
	if strings.Contains(line, "uid map") || strings.Contains(line, "namespace") {
		return "", fmt.Sprintf("bubblewrap cannot create a user namespace here (%s)", line),
			"allow unprivileged user namespaces: on Ubuntu 23.10 and later `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor profile for bwrap), on older Debian `sudo sysctl kernel.unprivileged_userns_clone=1`, in a container a seccomp profile that allows unshare"
	}
	return "", fmt.Sprintf("bubblewrap cannot confine commands here (%s)", line),
		"make `bwrap " + strings.Join(probeArgs, " ") + "` work"
}

package filesafe

import (
	"fmt"
	"os"
)

// OwnedPrivate checks that dir is a folder, not a link. Windows keeps a
// user's temp and cache folders private by their ACLs, which Go's mode
// bits do not show; owner and mode are not checked here
// (docs/platforms.md#windows).
func OwnedPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder (a link?): remove it and run again", dir)
	}
	return nil
}

// userTag: a Windows temp folder is the user's own already.
func userTag() string { return "" }

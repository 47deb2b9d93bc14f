package dashboard

//go:generate go run vendor_gen.go

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// The pages' own files and the vendored libraries (assets/vendor,
// written by `go generate` from assets/npm's lock file: vendor_gen.go).
// Embedded data is mapped lazily: a process that never serves a page (the
// hook) never reads it.
//
//go:embed assets/app.js assets/events.js assets/app.css assets/vendor/dagre.min.js assets/vendor/LICENSE.dagre.txt assets/vendor/morphdom.min.js assets/vendor/LICENSE.morphdom.txt
var assets embed.FS

// assetVersion is a digest of the assets, so a page never runs a stale
// script after an upgrade.
var assetVersion = sync.OnceValue(func() string {
	h := sha256.New()
	fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := assets.ReadFile(p)
			h.Write([]byte(p))
			h.Write(data)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
})

// contentTypes are the assets' types, by extension.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

// asset is GET /assets/{name...}: an embedded file.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	data, err := fs.ReadFile(assets, "assets/"+name)
	if err != nil || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "npm/") {
		httpError(w, "saga-lsp dashboard: no such asset", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", contentType(name))
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

package dashboard

//go:generate go run vendor_gen.go

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

// The pages' own files and the vendored layout library (assets/vendor,
// written by `go generate` from assets/npm's lock file: vendor_gen.go).
// Embedded data is mapped lazily: a process that never serves a page (the
// hook) never reads it.
//
//go:embed assets/app.js assets/app.css assets/vendor/dagre.min.js assets/vendor/LICENSE.dagre.txt
var assets embed.FS

//go:embed templates/*.html
var templates embed.FS

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

func assetHandler() http.Handler {
	sub, _ := fs.Sub(assets, "assets")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := path.Clean(r.URL.Path)
		data, err := fs.ReadFile(sub, name)
		if err != nil || strings.HasPrefix(name, ".") {
			http.NotFound(w, r)
			return
		}
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "private, max-age=3600")
		w.Write(data)
	})
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"money": func(f float64) string {
		if f == 0 {
			return "–"
		}
		return fmt.Sprintf("$%.2f", f)
	},
	"percent": func(done, total int) int {
		if total == 0 {
			return 0
		}
		return 100 * done / total
	},
	"safeURL": func(s string) template.URL {
		// Only web addresses are links (a PR); anything else is text.
		if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
			return template.URL(s)
		}
		return ""
	},
	// bar is done/total as 10 cells of text (a <progress> element per row
	// of a long table costs its shadow tree).
	"bar": func(done, total int) string {
		const cells = 10
		n := 0
		if total > 0 {
			n = min(cells, (done*cells+total/2)/total)
			if done > 0 && n == 0 {
				n = 1
			}
		}
		return strings.Repeat("█", n) + strings.Repeat("░", cells-n)
	},
	"join":  strings.Join,
	"state": stateOf,
	"asset": func(name string) string { return "/assets/" + name + "?v=" + assetVersion() },
}

// parsePages parses each page's template with the layout.
func parsePages() (map[string]*template.Template, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templates, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templates, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templates, n)
		if err != nil {
			return nil, err
		}
		pages[strings.TrimSuffix(base, ".html")] = t
	}
	return pages, nil
}

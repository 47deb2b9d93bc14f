//go:build ignore

// rest_gen writes rest.json and LICENSE: the operations of GitHub's
// published REST description (the npm package @octokit/openapi, at the
// version and tarball sha256 pinned below) that saga-lsp sends through
// `gh api` and the gh stand-in answers — each with its parameters, its
// request body's schema and its answers' schemas, references resolved and
// descriptions and examples left out. The full description is 13 MB; the
// subset is what the checks need. Run by `go generate
// ./testdata/standin/gh/ghrest`; TestVendoredREST runs it into a temporary
// folder and compares.
//
//	go run rest_gen.go [-out DIR] [-tarball FILE]
//
// Without -tarball it fetches the pinned tarball with `npm pack`; either
// way the tarball's sha256 must be the pinned one.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const (
	pkg     = "@octokit/openapi"
	version = "23.0.2"
	sha     = "71a18407dd5e8464f4e0525daf03deabbe65abd9287d6adc7b5d98f516cd0d0c"
)

// operations are the REST calls saga-lsp makes (runs/review, runs/github,
// runs/land)
// and the stand-in answers (api.go, reply.go): method and path template.
var operations = [][2]string{
	{"get", "/repos/{owner}/{repo}/collaborators/{username}/permission"},
	{"post", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers"},
	{"get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}"},
	{"get", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"},
	{"get", "/repos/{owner}/{repo}/stacks"},
}

// kept are the schema keywords the checks read.
var kept = map[string]bool{"type": true, "properties": true, "items": true, "required": true, "nullable": true,
	"oneOf": true, "anyOf": true, "allOf": true, "enum": true, "additionalProperties": true, "format": true}

func main() {
	out := flag.String("out", ".", "write the files into `DIR`")
	tarball := flag.String("tarball", "", "read the package from `FILE` instead of npm pack")
	flag.Parse()
	if err := run(*out, *tarball); err != nil {
		fmt.Fprintln(os.Stderr, "rest_gen:", err)
		os.Exit(1)
	}
}

func run(out, tarball string) error {
	if tarball == "" {
		tmp, err := os.MkdirTemp("", "saga-ghrest-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command("npm", "pack", "--silent", pkg+"@"+version)
		cmd.Dir = tmp
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm pack: %v\n%s", err, b)
		}
		tarball = filepath.Join(tmp, "octokit-openapi-"+version+".tgz")
	}
	data, err := os.ReadFile(tarball)
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != sha {
		return fmt.Errorf("%s: sha256 %x, pinned %s", tarball, sum, sha)
	}
	files, err := untar(data, "package/generated/api.github.com.json", "package/LICENSE")
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(files["package/generated/api.github.com.json"], &doc); err != nil {
		return err
	}
	r := resolver{doc: doc}
	var ops []any
	for _, o := range operations {
		op, err := r.operation(o[0], o[1])
		if err != nil {
			return err
		}
		ops = append(ops, op)
	}
	spec := map[string]any{
		"source":     map[string]any{"package": pkg, "version": version, "sha256": sha, "file": "generated/api.github.com.json", "openapi": doc["openapi"]},
		"operations": ops,
	}
	text, err := json.MarshalIndent(spec, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "rest.json"), append(text, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "LICENSE"), files["package/LICENSE"], 0o644)
}

func untar(gz []byte, names ...string) (map[string][]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if h.Name == n {
				if out[n], err = io.ReadAll(tr); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, n := range names {
		if out[n] == nil {
			return nil, fmt.Errorf("the package has no %s", n)
		}
	}
	return out, nil
}

type resolver struct{ doc map[string]any }

func (r resolver) ref(v any) (any, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, ""
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return v, ""
	}
	var cur any = r.doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		cur = cur.(map[string]any)[part]
	}
	return cur, ref
}

func (r resolver) operation(method, path string) (map[string]any, error) {
	item, ok := r.doc["paths"].(map[string]any)[path].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no path %s", path)
	}
	op, ok := item[method].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no %s %s", method, path)
	}
	out := map[string]any{"method": strings.ToUpper(method), "path": path, "operationId": op["operationId"]}
	var params []any
	for _, p := range op["parameters"].([]any) {
		p, _ := r.ref(p)
		pm := p.(map[string]any)
		params = append(params, map[string]any{"name": pm["name"], "in": pm["in"], "required": pm["required"] == true,
			"schema": r.schema(pm["schema"], nil)})
	}
	out["parameters"] = params
	if body, ok := op["requestBody"].(map[string]any); ok {
		body, _ := r.ref(body)
		out["body"] = r.schema(body.(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"], nil)
	}
	answers := map[string]any{}
	for status, resp := range op["responses"].(map[string]any) {
		resp, _ := r.ref(resp)
		var schema any
		if content, ok := resp.(map[string]any)["content"].(map[string]any); ok {
			if js, ok := content["application/json"].(map[string]any); ok {
				schema = r.schema(js["schema"], nil)
			}
		}
		answers[status] = schema // null: GitHub's description says no body's shape
	}
	out["responses"] = answers
	return out, nil
}

// schema is v with its references resolved (a reference inside itself
// becomes an unchecked object) and only the kept keywords.
func (r resolver) schema(v any, stack []string) any {
	v, ref := r.ref(v)
	if ref != "" {
		for _, s := range stack {
			if s == ref {
				return map[string]any{"type": "object", "additionalProperties": true}
			}
		}
		stack = append(stack, ref)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !kept[k] {
			continue
		}
		switch k {
		case "properties":
			props := map[string]any{}
			for name, p := range m[k].(map[string]any) {
				props[name] = r.schema(p, stack)
			}
			out[k] = props
		case "items":
			out[k] = r.schema(m[k], stack)
		case "additionalProperties":
			if _, isMap := m[k].(map[string]any); isMap {
				out[k] = r.schema(m[k], stack)
			} else {
				out[k] = m[k]
			}
		case "oneOf", "anyOf", "allOf":
			var list []any
			for _, s := range m[k].([]any) {
				list = append(list, r.schema(s, stack))
			}
			out[k] = list
		default:
			out[k] = m[k]
		}
	}
	return out
}

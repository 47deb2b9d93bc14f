module github.com/saga-ai/saga-lsp

go 1.26.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.36.0
)

require github.com/dlclark/regexp2 v1.12.0 // indirect

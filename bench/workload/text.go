package workload

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// verb is an imperative verb with the present-continuous form Claude Code's
// spinner shows (activeForm).
type verb struct{ imperative, continuous string }

func (v verb) id() string { return slug(v.imperative) }

// thing is an object phrase with the slug it contributes to ids.
type thing struct{ phrase, slug string }

func (t thing) id() string { return t.slug }

// vocabulary holds the word lists the texts are drawn from. It is built per
// generation (see newVocabulary) so the package has no mutable globals.
type vocabulary struct {
	epicAreas, epicTopics []string
	storyVerbs            []verb
	storyThings           []thing
	taskVerbs             []verb
	taskThings            []thing
	places                []string // where in a codebase work happens
	packages              []string // paths guidance points at
	descriptions          []string // sentence templates; see fill
	guidance              []string
	doneWhen              []string
	avoid                 []string
}

func newVocabulary() *vocabulary {
	return &vocabulary{
		epicAreas: []string{"billing", "search", "onboarding", "notifications", "reporting", "auth", "checkout",
			"inventory", "analytics", "messaging", "profiles", "permissions", "exports", "imports", "scheduling",
			"audit", "payments", "catalog", "shipping", "support"},
		epicTopics: []string{"api", "ui", "pipeline", "storage", "sync", "migration", "v2", "hardening", "rollout", "cleanup"},
		storyVerbs: []verb{{"Build", "Building"}, {"Set up", "Setting up"}, {"Rework", "Reworking"}, {"Add", "Adding"},
			{"Harden", "Hardening"}, {"Migrate", "Migrating"}, {"Expose", "Exposing"}, {"Split", "Splitting"}},
		storyThings: []thing{{"the admin page", "admin-page"}, {"the database schema", "db-schema"},
			{"the public API", "public-api"}, {"the login flow", "login-flow"}, {"the event consumer", "event-consumer"},
			{"the settings screen", "settings-screen"}, {"the export job", "export-job"}, {"the audit trail", "audit-trail"},
			{"the rate limiter", "rate-limiter"}, {"the search index", "search-index"}, {"the webhook receiver", "webhook-receiver"},
			{"the permission model", "permission-model"}},
		taskVerbs: []verb{{"Add", "Adding"}, {"Implement", "Implementing"}, {"Write", "Writing"}, {"Refactor", "Refactoring"},
			{"Extract", "Extracting"}, {"Wire", "Wiring"}, {"Document", "Documenting"}, {"Migrate", "Migrating"},
			{"Validate", "Validating"}, {"Cache", "Caching"}, {"Expose", "Exposing"}, {"Test", "Testing"},
			{"Harden", "Hardening"}, {"Instrument", "Instrumenting"}, {"Remove", "Removing"}, {"Replace", "Replacing"}},
		taskThings: []thing{{"retry logic for outgoing requests", "retry-logic"}, {"the session store", "session-store"},
			{"the pagination cursor", "pagination-cursor"}, {"input validation on the form", "form-validation"},
			{"the repository layer", "repository"}, {"the migration scripts", "migrations"},
			{"structured logging", "logging"}, {"the request metrics", "metrics"}, {"the feature flag", "feature-flag"},
			{"the error responses", "error-responses"}, {"integration tests", "integration-tests"},
			{"the background worker", "worker"}, {"the config loader", "config"}, {"the CSV encoder", "csv-encoder"},
			{"the email templates", "email-templates"}, {"the access checks", "access-checks"}},
		places: []string{"the HTTP handlers", "the repository layer", "the background worker", "the CLI",
			"the event bus", "the React front end", "the nightly batch job", "the gRPC gateway"},
		packages: []string{"internal/http", "internal/store", "internal/jobs", "cmd/server", "web/src/pages",
			"internal/events", "pkg/client", "internal/auth"},
		descriptions: []string{
			"Today this is handled ad hoc in {place}, and every caller repeats the same checks; {object} should live in one place.",
			"Users reported slow pages when more than {n} records are involved, and the traces point at {object}.",
			"Start from the existing code in {package} and keep the public signatures unchanged so callers do not notice.",
			"The change touches {place} only; the storage format stays as it is and no migration is needed for old rows.",
			"Keep the behaviour behind the existing feature flag until the rollout reaches 100% of tenants.",
			"Errors must carry enough context (tenant, request id, the failing step) to be actionable from the logs alone.",
			"Mind concurrent requests: two workers may pick up the same item, so the update has to be idempotent.",
			"The design doc settles the open questions — see the section on {object} — so no new decisions are needed here.",
			"Measure before and after with the benchmark in {package}; a regression above {n}% blocks the merge.",
			"Timeouts default to {n} seconds and are configurable per environment through the usual config file.",
			"This unblocks the follow-up work on {place}, which currently has to work around the missing piece.",
			"Handle the empty case explicitly: an empty list is valid input and must not produce an error.",
			"The old code path stays for one release so that rollbacks remain possible; mark it deprecated.",
			"Write the change so it can be reviewed in one sitting: small commits, each building and passing tests.",
		},
		guidance: []string{
			"Follow the handler style of {package}; return JSON errors {\"error\": \"…\"} with a stable code.",
			"Reuse the helpers in {package} rather than adding new ones, and keep functions short.",
			"Table-driven tests, one case per edge; use the fake clock instead of sleeping.",
			"Prefer plain functions over new interfaces; add an interface only when a second implementation exists.",
			"Check the existing fixtures in {package}/testdata before writing new ones.",
			"Log at info level once per request, debug for the details; never log secrets or tokens.",
		},
		doneWhen: []string{
			"Tests cover the success path and each failure of {object}; CI is green.",
			"The benchmark shows no regression over {n}% and the dashboards show the new metrics.",
			"A reviewer can follow the change from the PR description alone, and the docs mention the new behaviour.",
			"Every caller in {place} uses the new code path and the old one is marked deprecated.",
			"Manual check on staging: the scenario from the ticket works end to end.",
		},
		avoid: []string{
			"Do not change the wire format; mobile clients older than {n} days still read it.",
			"No new dependencies without asking first; the standard library covers this.",
			"Avoid global state and init() side effects; pass dependencies explicitly.",
			"Do not silence linters with nolint comments; fix the cause.",
		},
	}
}

// writer draws texts from the vocabulary with one random source, so the
// output depends only on the seed.
type writer struct {
	rng *rand.Rand
	v   *vocabulary
}

func pick[T any](w *writer, xs []T) T { return xs[w.rng.IntN(len(xs))] }

// fill replaces the placeholders {object}, {place}, {package} and {n} of a
// template with the subject's details.
func (w *writer) fill(template, object string) string {
	return strings.NewReplacer("{object}", object, "{place}", pick(w, w.v.places),
		"{package}", pick(w, w.v.packages), "{n}", strconv.Itoa(5+w.rng.IntN(95))).Replace(template)
}

// sentences joins n distinct templates, filled.
func (w *writer) sentences(templates []string, n int, object string) string {
	n = min(n, len(templates))
	parts := make([]string, n)
	for i, t := range w.rng.Perm(len(templates))[:n] {
		s := w.fill(templates[t], object)
		parts[i] = strings.ToUpper(s[:1]) + s[1:] // templates may start with a placeholder
	}
	return strings.Join(parts, " ")
}

// paragraph is a description of lo to hi sentences.
func (w *writer) paragraph(object string, lo, hi int) string {
	return w.sentences(w.v.descriptions, lo+w.rng.IntN(hi-lo+1), object)
}

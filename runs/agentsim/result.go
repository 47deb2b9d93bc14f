// The end of a run: the final result line, in the shape Claude Code 2.1.330
// writes it for each way a headless run ends.

package agentsim

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ending is how a run ended, as the final result line reports it.
type ending int

const (
	endSuccess          ending = iota // the model finished its turn
	endMaxTurns                       // --max-turns was reached
	endInterruptedTool                // SIGINT while a tool (or its hooks) ran
	endInterruptedModel               // SIGINT while waiting for the model
)

// endingOf classifies the error runScript returned (nil: success).
func endingOf(err error) ending {
	switch {
	case errors.Is(err, errMaxTurns):
		return endMaxTurns
	case errors.Is(err, errInterruptedTool):
		return endInterruptedTool
	case errors.Is(err, errInterruptedModel):
		return endInterruptedModel
	}
	return endSuccess
}

// resultLine is the final {"type":"result"} object with 2.1.330's keys in
// its order. A success carries "result" and the timing fields; an error
// carries "errors". num_turns counts as the real CLI does: one more than the
// model's turns when --max-turns stopped it, two more after an interrupt.
// Token counts and costs are zero: there is no model.
func (s *session) resultLine(e ending, streamJSON bool) *obj {
	isErr := e != endSuccess
	var stopReason any = "end_turn"
	terminal, subtype, numTurns := "completed", "success", s.turns
	var errs []string
	switch e {
	case endMaxTurns:
		stopReason, terminal, subtype, numTurns = "tool_use", "max_turns", "error_max_turns", s.turns+1
		errs = []string{fmt.Sprintf("Reached maximum number of turns (%d)", s.args.maxTurns)}
	case endInterruptedTool:
		stopReason, terminal, subtype, numTurns = "tool_use", "aborted_tools", "error_during_execution", s.turns+2
		errs = []string{"[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"}
	case endInterruptedModel:
		stopReason, terminal, subtype, numTurns = nil, "aborted_streaming", "error_during_execution", s.turns+2
		errs = []string{"[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"}
	}
	modelUsage := newObj()
	if s.turns > 0 {
		modelUsage.set(s.model, newObj("inputTokens", 0, "outputTokens", 0, "cacheReadInputTokens", 0,
			"cacheCreationInputTokens", 0, "webSearchRequests", 0, "costUSD", 0, "contextWindow", 1000000,
			"maxOutputTokens", 128000, "thinkingTokens", 0, "cacheCreationEphemeral5mInputTokens", 0,
			"cacheCreationEphemeral1hInputTokens", 0, "canonicalModel", s.model, "provider", "firstParty", "costBasis", "list"))
	}
	// A scripted model costs nothing, unless a test prices it
	// ($SAGA_STANDIN_COST_USD per run) to exercise cost caps.
	cost, _ := strconv.ParseFloat(s.getenv("SAGA_STANDIN_COST_USD"), 64)
	res := newObj("duration_api_ms", 0, "stop_reason", stopReason, "session_id", s.sessionID, "total_cost_usd", cost,
		"usage", resultUsage(), "modelUsage", modelUsage, "permission_denials", nonNilAny(s.denials),
		"terminal_reason", terminal, "fast_mode_state", "off", "fast_mode_disabled_reason", "sdk_opt_in_required",
		"subagent_stats", subagentStats(), "safety_stops", 0, "is_error", isErr, "num_turns", numTurns, "subtype", subtype)
	if isErr {
		res.set("errors", errs)
		res.set("type", "result")
		res.set("duration_ms", int(time.Since(s.start).Milliseconds()))
		res.set("uuid", newUUID())
	} else {
		res.set("api_error_status", nil)
		res.set("result", s.lastText)
		res.set("ttft_ms", 0)
		res.set("type", "result")
		res.set("duration_ms", int(time.Since(s.start).Milliseconds()))
		res.set("uuid", newUUID())
		res.set("ttft_stream_ms", 0)
		res.set("time_to_request_ms", 0)
		res.set("first_content_frame_ms", 0)
	}
	res.set("queued_turn_count", 0)
	res.set("result_index", 0)
	if streamJSON {
		res.set("model_usage_since_last_result", modelUsage)
	}
	return res
}

// writeResult writes the result in the run's output format: the result line
// for stream-json and json, the last text (or the error) for text.
func (s *session) writeResult(e ending) {
	switch s.args.outputFormat {
	case "stream-json":
		s.emit(s.resultLine(e, true))
	case "json":
		s.writeLine(stringify(s.resultLine(e, false), ""))
	default:
		switch e {
		case endSuccess:
			s.writeLine(s.lastText)
		case endMaxTurns:
			s.write(fmt.Sprintf("Error: Reached max turns (%d)", s.args.maxTurns))
		}
	}
}

func resultUsage() *obj {
	return newObj("input_tokens", 0, "cache_creation_input_tokens", 0, "cache_read_input_tokens", 0,
		"output_tokens", 0, "output_tokens_details", newObj("thinking_tokens", 0),
		"server_tool_use", newObj("web_search_requests", 0, "web_fetch_requests", 0), "service_tier", "standard",
		"cache_creation", newObj("ephemeral_1h_input_tokens", 0, "ephemeral_5m_input_tokens", 0),
		"inference_geo", "", "iterations", []any{}, "speed", "standard", "fallback_credit", nil)
}

func subagentStats() *obj {
	return newObj("spawned", 0, "requested", newObj("background", 0, "foreground", 0, "unset", 0),
		"started_in_background", 0, "max_depth", 0, "spawned_by_subagents", 0, "completed", 0, "failed", 0,
		"killed", newObj("parent", 0, "user", 0, "system", 0),
		"refused", newObj("depth_limit", 0, "concurrency_limit", 0, "budget", 0), "by_type", newObj())
}

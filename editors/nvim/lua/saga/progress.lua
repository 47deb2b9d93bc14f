-- saga.progress: live runs — the saga/workerProgress, saga/epicProgress and
-- saga/taskStatus notifications (kept in state.workers / state.epics), the
-- messages and once-only warnings they give, the User events they fire, and
-- the statusline component built from them.

local M = {}

local state = require('saga.state')
local message = require('saga.message')

local notify = message.notify

-- Worker states after which a worker no longer runs.
local FINAL_STATES = {
  completed = true,
  failed = true,
  timeout = true,
  blocked = true,
  stopped = true,
}

--- The latest saga/workerProgress of every story seen (running or not).
function M.workers()
  return state.workers
end

-- The keys of t whose value keep(value) accepts, sorted.
local function sorted_keys(t, keep)
  local out = {}
  for k, v in pairs(t) do
    if keep(v) then
      table.insert(out, k)
    end
  end
  table.sort(out)
  return out
end

--- Stories whose worker is running (not in a final state), sorted.
function M.running()
  return sorted_keys(state.workers, function(w) return not FINAL_STATES[w.state] end)
end

local function progress_text(w)
  local s = w.story
  if type(w.total) == 'number' and w.total > 0 then
    s = s .. ' ' .. tostring(w.done or 0) .. '/' .. tostring(w.total)
  end
  return s .. ' ' .. tostring(w.state or 'running')
end

--- The latest saga/epicProgress of every epic run seen (running or not).
function M.epic_runs()
  return state.epics
end

--- Epics whose run is running, sorted.
function M.running_epics()
  return sorted_keys(state.epics, function(e) return e.state == 'running' end)
end

-- The running epic a story belongs to, or nil.
local function epic_of_story(story)
  for _, epic in ipairs(M.running_epics()) do
    for _, s in ipairs(state.epics[epic].stories or {}) do
      if s.id == story then
        return epic
      end
    end
  end
  return nil
end

--- Statusline component: "SAGA shop 3/8 ▶2" for a running epic (stories done/total,
--- ▶ stories running), "user-auth--api 3/5 running" for a running worker of no running
--- epic; several joined by ", "; "" when nothing runs.
function M.statusline()
  local parts = {}
  for _, epic in ipairs(M.running_epics()) do
    local e = state.epics[epic]
    table.insert(parts, string.format('%s %d/%d ▶%d', epic, e.done or 0, e.total or 0, #(e.running or {})))
  end
  for _, story in ipairs(M.running()) do
    if not epic_of_story(story) then
      table.insert(parts, progress_text(state.workers[story]))
    end
  end
  if #parts == 0 then
    return ''
  end
  return 'SAGA ' .. table.concat(parts, ', ')
end

local function fire_user_event(pattern)
  pcall(vim.cmd, 'doautocmd <nomodeline> User ' .. pattern)
end

-- Ends that need the user (a story's run ended failed, blocked or timed out): one
-- warning each, with what to do.
local NEEDS_YOU = {
  failed = '%s failed — :SagaOutput %s shows why',
  timeout = '%s timed out (a limit stopped it) — :SagaOutput %s shows where it got to',
  blocked = '%s is blocked (a blocker in its journal) — resolve it, then run it again (:SagaOutput %s)',
}

-- Warns once for the end `key` names (never again for the same end).
local function needs_you(key, msg)
  if state.needs_you[key] then
    return
  end
  state.needs_you[key] = true
  notify('saga: ' .. msg, vim.log.levels.WARN)
end

-- Keeps a notification's params in states[params[key]]: without vim.NIL values,
-- plus the client id. Returns them and the ones they replace; nil unless
-- params[key] is a string.
local function keep(states, key, params, ctx)
  if type(params) ~= 'table' or type(params[key]) ~= 'string' then
    return nil
  end
  local out = {}
  for k, v in pairs(params) do
    if v ~= vim.NIL then
      out[k] = v
    end
  end
  out.client_id = ctx and ctx.client_id
  local before = states[out[key]]
  states[out[key]] = out
  return out, before
end

-- What follows a progress notification: the user's hook, the statusline, the User event.
local function after_progress(hook, params, event)
  if hook then
    pcall(hook, params)
  end
  pcall(vim.cmd, 'redrawstatus!')
  fire_user_event(event)
end

-- saga/workerProgress: the statusline follows it; a run that ends needing you warns
-- once; a worker of no running epic gets a message per change.
function M.on_worker_progress(params, ctx)
  local w = keep(state.workers, 'story', params, ctx)
  if not w then
    return
  end
  local final = FINAL_STATES[w.state] or false

  if final and NEEDS_YOU[w.state] then
    local msg = string.format(NEEDS_YOU[w.state], w.story, w.story)
    if w.message and w.message ~= '' then
      msg = msg .. ' (' .. w.message .. ')'
    end
    needs_you('end ' .. w.story .. ' ' .. tostring(w.session), msg)
  elseif state.config.notify and not epic_of_story(w.story) then
    -- One message per change of state, step or progress of a worker of its own (an
    -- epic's workers show in the statusline and the lenses); the statusline shows the rest.
    local key = table.concat({ tostring(w.state), tostring(w.step), tostring(w.done), tostring(w.total), tostring(w.cycle) }, '|')
    if state.notified[w.story] ~= key then
      state.notified[w.story] = key
      local msg = 'saga: ' .. progress_text(w)
      if w.step and w.step ~= '' and not final then
        msg = msg .. ' [' .. w.step .. ']'
      end
      if w.message and w.message ~= '' then
        msg = msg .. ' — ' .. w.message
      end
      notify(msg, state.config.notify_level)
    end
  end
  if final then
    state.notified[w.story] = nil
  end
  after_progress(state.config.on_worker_progress, w, 'SagaWorkerProgress')
end

-- saga/epicProgress: the statusline and lenses follow it; a story newly held warns once
-- per run; the run's end is one message.
function M.on_epic_progress(params, ctx)
  local e, before = keep(state.epics, 'epic', params, ctx)
  if not e then
    return
  end
  for _, s in ipairs(e.stories or {}) do
    if s.state == 'held' then
      local by = {}
      for _, b in ipairs(s.heldBy or {}) do
        local bs = ''
        for _, o in ipairs(e.stories) do
          if o.id == b then
            bs = ' (' .. tostring(o.state) .. ')'
          end
        end
        table.insert(by, b .. bs)
      end
      needs_you('held ' .. tostring(e.session) .. ' ' .. s.id,
        string.format('%s is held by %s — it will not run in this epic run (:SagaPlan %s)', s.id, table.concat(by, ', '), e.epic))
    end
  end
  if state.config.notify and e.state ~= 'running' and not (before and before.session == e.session and before.state == e.state) then
    notify(string.format('saga: epic %s %s: %d/%d stories', e.epic, tostring(e.state), e.done or 0, e.total or 0), state.config.notify_level)
  end
  after_progress(state.config.on_epic_progress, e, 'SagaEpicProgress')
end

-- saga/taskStatus: a message, unless the story runs in an epic.
function M.on_task_status(params, ctx)
  if type(params) ~= 'table' then
    return
  end
  if state.config.notify and not epic_of_story(params.story) then
    local subject = (params.subject and params.subject ~= vim.NIL and params.subject ~= '') and (' ' .. params.subject) or ''
    local from = (params.from and params.from ~= vim.NIL and params.from ~= '') and (tostring(params.from) .. ' → ') or ''
    local source = (params.source and params.source ~= vim.NIL and params.source ~= '') and (' (' .. params.source .. ')') or ''
    notify(string.format('saga: %s #%s%s: %s%s%s', tostring(params.story), tostring(params.task), subject, from, tostring(params.to), source), state.config.notify_level)
  end
  if state.config.on_task_status then
    pcall(state.config.on_task_status, params)
  end
  fire_user_event('SagaTaskStatus')
end

return M

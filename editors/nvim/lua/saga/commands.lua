-- saga.commands: the :Saga* user commands — splitting and parsing their
-- command lines, completing their arguments, and defining them (before setup()
-- too: plugin/saga.lua).

local M = {}

local actions = require('saga.actions')
local dashboard = require('saga.dashboard')
local message = require('saga.message')
local new = require('saga.new')
local progress = require('saga.progress')
local review = require('saga.review')
local server = require('saga.server')
local workspace = require('saga.workspace')

local notify = message.notify

-- Splits a command line like a shell does: "…" and '…' quote, \ escapes.
function M.split_args(s)
  local args, cur, quote, escaped, has_cur = {}, {}, nil, false, false
  for ch in s:gmatch('.') do
    if escaped then
      table.insert(cur, ch)
      escaped, has_cur = false, true
    elseif ch == '\\' and quote ~= "'" then
      escaped = true
    elseif quote then
      if ch == quote then
        quote = nil
      else
        table.insert(cur, ch)
      end
    elseif ch == '"' or ch == "'" then
      quote, has_cur = ch, true
    elseif ch:match('%s') then
      if has_cur then
        table.insert(args, table.concat(cur))
        cur, has_cur = {}, false
      end
    else
      table.insert(cur, ch)
      has_cur = true
    end
  end
  if has_cur then
    table.insert(args, table.concat(cur))
  end
  return args
end

local function filter(list, lead)
  local out = {}
  for _, v in ipairs(list) do
    if v:sub(1, #lead) == lead then
      table.insert(out, v)
    end
  end
  return out
end

local function complete_stories(lead)
  return filter(workspace.stories(), lead)
end

local RUN_FLAGS = { '--story', '--epic', '--max-parallel', '--max-cost', '--after' }

-- Parses `[--story | --epic] [--max-parallel K] [--max-cost USD] [--after ready|merged]
-- [name]` (flags anywhere; `--flag=value` too) into the name and run()'s opts, or an error.
function M.target_args(line, bang)
  local args = M.split_args(line or '')
  local opts, name = { dry_run = bang or nil }, nil
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == '--story' or a == '--epic' then
      opts[a:sub(3)] = true
    elseif a:match('^%-%-') then
      local flag, value = a:match('^%-%-([%w-]+)=(.*)$')
      if not flag then
        flag, value = a:sub(3), args[i + 1]
        i = i + 1
      end
      local key = flag:gsub('-', '_')
      if not vim.tbl_contains({ 'max_parallel', 'max_cost', 'after' }, key) then
        return nil, nil, 'unknown flag --' .. flag .. ' (' .. table.concat(RUN_FLAGS, ', ') .. ')'
      end
      if value == nil or value == '' then
        return nil, nil, '--' .. flag .. ' needs a value'
      end
      opts[key] = value
    elseif name then
      return nil, nil, 'one name at most, got ' .. name .. ' and ' .. a
    else
      name = a
    end
    i = i + 1
  end
  if opts.story and opts.epic then
    return nil, nil, '--story and --epic exclude each other: pass the one the name is'
  end
  return name, opts
end

-- :SagaRun: flags, --after's values, stories and epics.
function M.complete_run(lead, line)
  if lead:match('^%-') then
    return filter(RUN_FLAGS, lead)
  end
  local before = M.split_args(line)
  if lead ~= '' then
    table.remove(before)
  end
  if before[#before] == '--after' then
    return filter({ 'ready', 'merged' }, lead)
  end
  local out = workspace.stories()
  vim.list_extend(out, workspace.epics())
  return filter(out, lead)
end

local function complete_stop(lead)
  local out, seen = {}, {}
  for _, e in ipairs(progress.running_epics()) do
    seen[e] = true
    table.insert(out, e)
  end
  for _, s in ipairs(progress.running()) do
    seen[s] = true
    table.insert(out, s)
  end
  for _, s in ipairs(workspace.stories()) do
    if not seen[s] then
      table.insert(out, s)
    end
  end
  return filter(out, lead)
end

local function complete_plan(lead)
  local out = workspace.stories()
  vim.list_extend(out, workspace.epics())
  return filter(out, lead)
end

function M.complete_new(lead, line)
  local before = M.split_args(line)
  table.remove(before, 1) -- the command name
  if lead ~= '' then
    table.remove(before) -- the word being completed
  end
  local kind = before[1]
  if kind == nil then
    return filter({ 'story', 'task', 'epic' }, lead)
  end
  local prev = before[#before]
  if lead:match('^%-') then
    return filter(new.flags[kind] or {}, lead)
  end
  if prev == '--epic' then
    return filter(workspace.epics(), lead)
  end
  if kind == 'task' and #before == 1 then
    return complete_stories(lead)
  end
  return {}
end

--- Defines :SagaRun, :SagaStop, :SagaLand, :SagaResolve, :SagaPlan, :SagaReview, :SagaAddressReview,
--- :SagaReviewComment, :SagaNew, :SagaOutput,
--- :SagaDashboard, :SagaRestart, :SagaLog and :SagaInfo.
function M.define()
  local cmd = vim.api.nvim_create_user_command
  -- The name and the flags of :SagaRun, :SagaStop and :SagaPlan; a mistake is a message.
  local function with_target(f)
    return function(o)
      local name, opts, err = M.target_args(o.args, o.bang)
      if err then
        notify('saga: ' .. err, vim.log.levels.ERROR)
        return
      end
      f(name, opts)
    end
  end
  cmd('SagaRun', with_target(actions.run), {
    nargs = '*', bang = true, complete = M.complete_run,
    desc = "saga: run a story's worker or an epic (! : dry run with the simulated agent)",
  })
  cmd('SagaStop', with_target(actions.stop), {
    nargs = '*', complete = complete_stop, desc = "saga: stop a story's worker or an epic's run",
  })
  cmd('SagaPlan', with_target(actions.plan), {
    nargs = '*', complete = complete_plan, desc = 'saga: show the execution plan of a story or epic (an epic: with its run states)',
  })
  cmd('SagaLand', with_target(actions.land), {
    nargs = '*', complete = complete_plan, desc = "saga: land a story's or an epic's ready PRs, in dependency order",
  })
  cmd('SagaResolve', function(o) actions.resolve(o.args) end, {
    nargs = '?', complete = complete_stories, desc = "saga: start a story's run on its conflict-resolution task (land --resolve)",
  })
  cmd('SagaReview', function(o) review.review(o.args) end, {
    nargs = '?', complete = complete_stories, desc = "saga: the files a story's branch changed, in the quickfix list",
  })
  cmd('SagaAddressReview', function(o) review.address(o.args) end, {
    nargs = '?', complete = complete_stories, desc = "saga: address a story's PR review: a round on its branch and PR",
  })
  cmd('SagaReviewComment', function(o) review.comment(o.args) end, {
    nargs = '+', desc = "saga: a review comment on the current line: a review task of the story under review",
  })
  cmd('SagaNew', function(o)
    local args = M.split_args(o.args)
    local kind = table.remove(args, 1)
    new.new(kind, args)
  end, {
    nargs = '+', complete = M.complete_new, desc = 'saga: create a story, task or epic',
  })
  cmd('SagaOutput', function(o) actions.output(o.args) end, {
    nargs = '?', complete = complete_stop, desc = "saga: open a worker's output file",
  })
  cmd('SagaDashboard', function(o) dashboard.open({ print = o.bang }) end, {
    nargs = 0, bang = true, desc = 'saga: open the live dashboard of the backlog and its runs in the browser (! : only show its URL)',
  })
  cmd('SagaRestart', function() server.restart() end, {
    nargs = 0, desc = 'saga: stop the saga-lsp clients and start them again for their buffers',
  })
  cmd('SagaLog', function() server.log() end, { nargs = 0, desc = "saga: open saga-lsp's log" })
  cmd('SagaInfo', function() server.info() end, {
    nargs = 0, desc = 'saga: the running saga-lsp clients, their roots, servers, buffers and log',
  })
end

return M

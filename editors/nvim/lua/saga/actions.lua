-- saga.actions: running, stopping, landing and showing stories and epics — what
-- :SagaRun, :SagaStop, :SagaLand, :SagaResolve, :SagaPlan and :SagaOutput do (which of a story or an
-- epic a name stands for, the server command, the reply shown), and the
-- client-side handlers of the server's lens commands, which take the same paths.

local M = {}

local lsp = require('saga.lsp')
local message = require('saga.message')
local progress = require('saga.progress')
local review = require('saga.review')
local state = require('saga.state')
local ui = require('saga.ui')
local workspace = require('saga.workspace')

local notify, err_text, reply_done = message.notify, message.err_text, message.reply_done
local execute_or_notify = lsp.execute_or_notify

-- The story (or other name) of a command's arguments: [{story = …}] or [name].
local function command_name(command)
  local a = type(command) == 'table' and type(command.arguments) == 'table' and command.arguments[1] or nil
  if type(a) == 'table' then
    return a.story or a.name or a.epic
  end
  return type(a) == 'string' and a or nil
end

-- Client-side handlers of the server's lens commands (vim.lsp.codelens.run()
-- looks here first): the same paths as the user commands, so results are
-- shown the same way.
function M.lens_commands(prefix)
  -- runStory / runEpic: their argument may ask for a dry run.
  local function run(kind)
    return function(command)
      local a = command.arguments and command.arguments[1]
      M.run(command_name(command), { [kind] = true, dry_run = type(a) == 'table' and a.dryRun == true })
    end
  end
  return {
    [prefix .. 'runStory'] = run('story'),
    [prefix .. 'stopStory'] = function(command) M.stop(command_name(command), { story = true }) end,
    [prefix .. 'showOutput'] = function(command) M.output(command_name(command)) end,
    [prefix .. 'showPlan'] = function(command) M.plan(command_name(command)) end,
    [prefix .. 'runEpic'] = run('epic'),
    [prefix .. 'stopEpic'] = function(command) M.stop(command_name(command), { epic = true }) end,
    [prefix .. 'reviewStory'] = function(command) review.review(command_name(command)) end,
    [prefix .. 'addressReview'] = function(command) review.address(command_name(command)) end,
    [prefix .. 'land'] = function(command)
      local a = command.arguments and command.arguments[1]
      M.land(command_name(command), { epic = type(a) == 'table' and a.epic ~= nil, story = type(a) == 'table' and a.story ~= nil })
    end,
    [prefix .. 'resolveConflict'] = function(command) M.resolve(command_name(command)) end,
  }
end

-- What a name given to :SagaRun, :SagaStop or :SagaPlan stands for: 'story' or 'epic'
-- (opts.story / opts.epic say which; a name that is both needs one of them), or nil
-- and an error. No name: the buffer's story, else its epic.
function M.target(name, opts, command)
  opts = opts or {}
  if name == nil or name == '' then
    local story, epic = workspace.story_of(0), workspace.epic_of(0)
    if opts.epic and epic then
      return epic, 'epic'
    end
    if story and not opts.epic then
      return story, 'story'
    end
    if epic and not opts.story then
      return epic, 'epic'
    end
    return nil, nil, string.format('which story or epic? :%s [--story | --epic] <name> (or run it from a file of the story or epic)', command)
  end
  if opts.story then
    return name, 'story'
  end
  if opts.epic then
    return name, 'epic'
  end
  local is_story = vim.tbl_contains(workspace.stories(), name)
  local is_epic = vim.tbl_contains(workspace.epics(), name)
  if is_story and is_epic then
    return nil, nil, string.format('%s is both a story and an epic: :%s --story %s or :%s --epic %s', name, command, name, command, name)
  end
  return name, is_epic and 'epic' or 'story'
end

-- The function(name, opts) of :SagaRun, :SagaStop or :SagaPlan (`command`): f(name,
-- kind, opts) once M.target knows what the name is, a message saying what is wrong
-- when it cannot tell.
local function on_target(command, f)
  return function(name, opts)
    opts = opts or {}
    local kind, err
    name, kind, err = M.target(name, opts, command)
    if not name then
      notify('saga: ' .. err, vim.log.levels.ERROR)
      return
    end
    f(name, kind, opts)
  end
end

--- :SagaRun[!] [--story | --epic] [--max-parallel K] [--max-cost USD] [--after ready|merged] [name]
--- — starts a story's worker or an epic's runner (`!` or dry_run: the simulated agent).
--- opts: dry_run, story / epic (what the name is), max_parallel, max_cost, after, callback.
M.run = on_target('SagaRun', function(name, kind, opts)
  local arg = { [kind] = name }
  if opts.dry_run or state.config.dry_run then
    arg.dryRun = true
  end
  if kind == 'epic' then
    arg.maxParallel = tonumber(opts.max_parallel)
    arg.maxCost = tonumber(opts.max_cost)
    arg.after = opts.after
  end
  local command = kind == 'epic' and 'runEpic' or 'runStory'
  execute_or_notify(command, { arg }, 'run ' .. name, function(result)
    if kind == 'epic' and type(result) == 'table' then
      -- Running from now on: its workers' progress goes to the statusline, not to messages.
      state.epics[name] = state.epics[name] or {}
      if state.epics[name].session ~= result.session then
        state.epics[name] = { epic = name, session = result.session, state = 'running', done = 0, total = 0, running = {}, stories = {} }
      end
    end
    local msg = 'saga: started ' .. (kind == 'epic' and 'epic ' or '') .. name .. (arg.dryRun and ' (dry run)' or '')
    if type(result) == 'table' then
      if result.session then
        msg = msg .. ' in tmux session ' .. result.session
      end
      if result.attach and result.attach ~= '' then
        msg = msg .. ' (watch: ' .. result.attach .. ')'
      end
    end
    reply_done(opts, result, msg)
  end)
end)

local stop = on_target('SagaStop', function(name, kind, opts)
  local command = kind == 'epic' and 'stopEpic' or 'stopStory'
  execute_or_notify(command, { { [kind] = name } }, 'stop ' .. name, function(result)
    local how = ''
    if type(result) == 'table' then
      how = (result.state and result.state ~= '' and result.state ~= vim.NIL) and (' (' .. result.state .. ')') or ''
      if result.forced then
        how = how .. ', its tmux session killed'
      end
    end
    reply_done(opts, result, 'saga: stopped ' .. (kind == 'epic' and 'epic ' or '') .. name .. how)
  end)
end)

--- :SagaStop [--story | --epic] [name] — stops a story's worker or an epic's runner and
--- its workers (default: the buffer's story or epic, or the only running one).
function M.stop(name, opts)
  opts = opts or {}
  if (name == nil or name == '') and not workspace.story_of(0) and not workspace.epic_of(0) then
    local running, epics = progress.running(), progress.running_epics()
    if #epics == 1 then
      name, opts.epic = epics[1], true
    elseif #running == 1 then
      name, opts.story = running[1], true
    end
  end
  stop(name, opts)
end

--- :SagaLand [--story | --epic] [name] — one land pass (`saga-lsp land <name>`): the
--- ready stories' PRs merged in dependency order; the reply says where each stands.
M.land = on_target('SagaLand', function(name, kind, opts)
  execute_or_notify('land', { { [kind] = name } }, 'land ' .. name, function(result)
    local parts = {}
    if type(result) == 'table' and type(result.stories) == 'table' then
      for _, s in ipairs(result.stories) do
        local why = (type(s.why) == 'string' and s.why ~= '') and (' — ' .. s.why) or ''
        table.insert(parts, s.story .. ': ' .. s.state .. why)
      end
    end
    reply_done(opts, result, 'saga: land ' .. name .. (#parts > 0 and ('\n' .. table.concat(parts, '\n')) or ''))
  end)
end)

--- :SagaResolve [story] — `saga-lsp land --resolve <story>`: the story's run on its
--- conflict-resolution task (the lens "Resolve conflict"); refused without one.
function M.resolve(story, opts)
  opts = opts or {}
  story = (story ~= nil and story ~= '') and story or workspace.story_of(0)
  if not story then
    notify('saga: which story? :SagaResolve <story>', vim.log.levels.ERROR)
    return
  end
  execute_or_notify('resolveConflict', { { story = story } }, 'resolve ' .. story, function(result)
    local msg = 'saga: resolving the conflict of ' .. story
    if type(result) == 'table' and type(result.session) == 'string' then
      msg = msg .. ' in tmux session ' .. result.session
    end
    reply_done(opts, result, msg)
  end)
end

-- The plan text of a showPlan result ({name, title, kind, text, plan}): its
-- text, as `saga-lsp plan` prints it.
local function text_lines(text)
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

local function plan_lines(name, result)
  if type(result) == 'string' then
    return text_lines(result)
  end
  if type(result) == 'table' and type(result.text) == 'string' then
    return text_lines(result.text)
  end
  return { 'saga-lsp returned no plan text for ' .. name .. ':', unpack(vim.split(vim.inspect(result), '\n', { plain = true })) }
end

M.plan_lines = plan_lines

--- :SagaPlan [--story | --epic] [story-or-epic] — the execution plan in a scratch buffer;
--- for an epic, each story's run state under it.
M.plan = on_target('SagaPlan', function(name, kind, opts)
  execute_or_notify('showPlan', { { [kind] = name } }, 'plan ' .. name, function(result)
    local buf = ui.show_scratch('saga://plan/' .. name, plan_lines(name, result), opts.window)
    if opts.callback then
      opts.callback(buf, result)
    end
  end)
end)

--- :SagaOutput [story] — opens the output file of the story's running (else last) worker.
function M.output(story)
  story = (story ~= nil and story ~= '') and story or workspace.story_of(0) or progress.running()[1]
  if not story then
    notify('saga: which story? :SagaOutput <story>', vim.log.levels.ERROR)
    return
  end
  lsp.execute('showOutput', { { story = story } }, function(err, result)
    local file = type(result) == 'table' and result.outputFile or nil
    if err then
      -- the server knows no output: what the progress notifications said, if anything
      file = state.workers[story] and state.workers[story].outputFile
      if not file then
        notify('saga: output of ' .. story .. ': ' .. err_text(err), vim.log.levels.ERROR)
        return
      end
    end
    -- the server opens it with window/showDocument when it can (result.shown)
    if file and not (type(result) == 'table' and result.shown) then
      ui.edit_file(file)
    end
  end)
end

return M

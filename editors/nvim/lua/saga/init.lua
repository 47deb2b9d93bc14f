-- saga.nvim: Neovim client for saga-lsp (the language server of `.saga/`
-- workspaces). See :help saga and editors/nvim/README.md.
--
-- Works on Neovim 0.7 and later: `vim.lsp.start` where it exists (0.8+),
-- `vim.lsp.start_client` + `vim.lsp.buf_attach_client` on 0.7; the code lens,
-- health and client APIs are picked by version in the same way.

local M = {}

local uv = vim.uv or vim.loop

local codelens = require('saga.codelens')
local compat = require('saga.compat')
local config = require('saga.config')
local handlers = require('saga.handlers')
local message = require('saga.message')
local progress = require('saga.progress')
local state = require('saga.state')
local ui = require('saga.ui')
local workspace = require('saga.workspace')

local CLIENT_NAME = config.client_name
local client_request, client_stopped, all_clients, has = compat.client_request, compat.client_stopped, compat.all_clients, compat.has
local notify, err_text = message.notify, message.err_text
local normalize = workspace.normalize
local refresh_lenses, on_codelens_refresh, on_progress = codelens.refresh, codelens.on_refresh, codelens.on_progress
local leave_float, edit_file = ui.leave_float, ui.edit_file
local on_show_document, on_show_message = handlers.on_show_document, handlers.on_show_message

M.is_saga_file = workspace.is_saga_file
M.root_of = workspace.root_of
M.root = workspace.root
M.story_of = workspace.story_of
M.epic_of = workspace.epic_of
M.stories = workspace.stories
M.epics = workspace.epics

M.workers = progress.workers
M.running = progress.running
M.epic_runs = progress.epic_runs
M.running_epics = progress.running_epics
M.statusline = progress.statusline
M._on_worker_progress = progress.on_worker_progress
M._on_epic_progress = progress.on_epic_progress
M._on_task_status = progress.on_task_status

M.refresh_codelens = codelens.refresh
M.show_scratch = ui.show_scratch


---------------------------------------------------------------------------
-- Clients
---------------------------------------------------------------------------

local lens_commands -- client-side handlers of the lens commands, defined with the commands

--- The running saga-lsp client of a root, or nil.
function M.client_for_root(root)
  for _, client in ipairs(all_clients()) do
    if client.name == CLIENT_NAME and client.config.root_dir == root and not client_stopped(client) then
      return client
    end
  end
  return nil
end

--- The saga-lsp client attached to a buffer, or nil.
function M.client_for_buf(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  for _, client in ipairs(all_clients()) do
    if client.name == CLIENT_NAME and vim.lsp.buf_is_attached(buf, client.id) then
      return client
    end
  end
  return nil
end

local function on_attach(client, buf)
  state.last_buf = buf
  if M.config.codelens then
    local group = vim.api.nvim_create_augroup('saga_codelens_' .. buf, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'BufWritePost', 'InsertLeave' }, {
      group = group,
      buffer = buf,
      callback = function(args)
        refresh_lenses(args.buf)
      end,
    })
    refresh_lenses(buf)
  end
  if M.config.codelens_keymap then
    vim.api.nvim_buf_set_keymap(buf, 'n', M.config.codelens_keymap, '<cmd>lua vim.lsp.codelens.run()<CR>', { noremap = true, silent = true, desc = 'saga: run code lens' })
  end
  if M.config.on_attach then
    M.config.on_attach(client, buf)
  end
end

local function client_config(root)
  local opts = M.config
  local cmd = vim.deepcopy(opts.cmd)
  if opts.log_file then
    table.insert(cmd, '--log-file')
    table.insert(cmd, opts.log_file)
  end
  local handlers = {
    ['saga/workerProgress'] = function(err, result, ctx) M._on_worker_progress(result, ctx) end,
    ['saga/taskStatus'] = function(err, result, ctx) M._on_task_status(result, ctx) end,
    ['saga/epicProgress'] = function(err, result, ctx) M._on_epic_progress(result, ctx) end,
    ['window/showMessage'] = on_show_message,
    ['$/progress'] = on_progress,
  }
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.window = caps.window or {}
  if not vim.lsp.handlers['workspace/codeLens/refresh'] then
    handlers['workspace/codeLens/refresh'] = on_codelens_refresh
  end
  caps.workspace.codeLens = { refreshSupport = true }
  -- Ours on every version: it leaves floating windows and does not open a
  -- file :SagaNew has just opened.
  handlers['window/showDocument'] = on_show_document
  caps.window.showDocument = { support = true }
  if opts.capabilities then
    caps = vim.tbl_deep_extend('force', caps, opts.capabilities)
  end
  return {
    name = CLIENT_NAME,
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = caps,
    init_options = {
      sagaNotifications = true,
      commandPrefix = opts.command_prefix,
    },
    handlers = handlers,
    commands = lens_commands(opts.command_prefix),
    on_attach = on_attach,
    flags = { debounce_text_changes = 150 },
  }
end

-- Starts a client that is attached to no buffer (for commands run from outside `.saga/`).
local function start_detached(root)
  local config = client_config(root)
  local id
  if has('0.11') then
    id = vim.lsp.start(config, { attach = false })
  else
    id = vim.lsp.start_client(config)
  end
  return id and vim.lsp.get_client_by_id(id)
end

--- Attaches saga-lsp to a buffer if it is a JSON file under `.saga/`
--- (starting the root's server, or reusing it). Returns the client id.
function M.attach(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local name = vim.api.nvim_buf_get_name(buf)
  if vim.bo[buf].buftype ~= '' or not M.is_saga_file(name) then
    return nil
  end
  local root = M.root_of(name)
  if not root then
    return nil
  end
  local existing = M.client_for_buf(buf)
  if existing then
    return existing.id
  end
  local id
  if vim.lsp.start then
    -- 0.8+: reuses the client of the same name and root.
    id = vim.lsp.start(client_config(root), { bufnr = buf })
  else
    local client = M.client_for_root(root)
    id = client and client.id or vim.lsp.start_client(client_config(root))
    if id and not vim.lsp.buf_attach_client(buf, id) then
      id = nil
    end
  end
  if not id then
    notify('saga: could not start ' .. table.concat(M.config.cmd, ' ') .. ' (see :checkhealth saga)', vim.log.levels.ERROR)
  end
  return id
end

-- Calls fn(client) once a client for the current context is initialized:
-- the current buffer's client, else the root's (started when needed).
local function with_client(fn)
  local client = M.client_for_buf(0)
  if not client then
    local root = M.root()
    if not root then
      notify('saga: no .saga/ folder here (open a file under .saga/ or :cd into the workspace)', vim.log.levels.ERROR)
      return
    end
    client = M.client_for_root(root) or start_detached(root)
    if not client then
      notify('saga: could not start ' .. table.concat(M.config.cmd, ' '), vim.log.levels.ERROR)
      return
    end
  end
  local deadline = uv.now() + 15000
  local function go()
    if client_stopped(client) then
      notify('saga: saga-lsp stopped', vim.log.levels.ERROR)
    elseif client.initialized then
      fn(client)
    elseif uv.now() > deadline then
      notify('saga: saga-lsp did not initialize within 15 s', vim.log.levels.ERROR)
    else
      vim.defer_fn(go, 30)
    end
  end
  go()
end

--- Runs workspace/executeCommand `<prefix><name>` with `arguments` and calls
--- callback(err, result, client); a command the server does not list in
--- executeCommandProvider is an error naming the ones it has.
function M.execute(name, arguments, callback)
  callback = callback or function(err)
    if err then
      notify('saga: ' .. name .. ': ' .. err_text(err), vim.log.levels.ERROR)
    end
  end
  with_client(function(client)
    local command = M.config.command_prefix .. name
    local provider = client.server_capabilities and client.server_capabilities.executeCommandProvider
    if type(provider) == 'table' and type(provider.commands) == 'table' and not vim.tbl_contains(provider.commands, command) then
      callback({ message = 'saga-lsp does not offer the command ' .. command .. ' (offers: ' .. table.concat(provider.commands, ', ') .. ')' }, nil, client)
      return
    end
    local key = client.id .. ' ' .. name
    state.pending[key] = (state.pending[key] or 0) + 1
    client_request(client, 'workspace/executeCommand', { command = command, arguments = arguments }, function(err, result)
      state.pending[key] = state.pending[key] - 1
      if result == vim.NIL then
        result = nil
      end
      callback(err, result, client)
    end)
  end)
end

---------------------------------------------------------------------------
-- Commands
---------------------------------------------------------------------------

-- Splits a command line like a shell does: "…" and '…' quote, \ escapes.
function M._split_args(s)
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

-- "--blocked-by" -> "blockedBy"
local function camel(flag)
  return (flag:gsub('%-(%w)', function(c) return c:upper() end))
end

-- Parses "pos1 pos2 --flag value --flag=value" into positionals and flags.
local function parse_flags(args)
  local pos, flags = {}, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local name, value = a:match('^%-%-([%w-]+)=(.*)$')
    if name then
      flags[camel(name)] = value
    elseif a:match('^%-%-[%w-]+$') then
      flags[camel(a:sub(3))] = args[i + 1] or ''
      i = i + 1
    else
      table.insert(pos, a)
    end
    i = i + 1
  end
  return pos, flags
end

local function list_flag(v)
  if v == nil then
    return nil
  end
  local out = {}
  for item in tostring(v):gmatch('[^,%s]+') do
    table.insert(out, item)
  end
  return out
end

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
lens_commands = function(prefix)
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
    [prefix .. 'reviewStory'] = function(command) M.review(command_name(command)) end,
  }
end

-- What a name given to :SagaRun, :SagaStop or :SagaPlan stands for: 'story' or 'epic'
-- (opts.story / opts.epic say which; a name that is both needs one of them), or nil
-- and an error. No name: the buffer's story, else its epic.
function M._target(name, opts, command)
  opts = opts or {}
  if name == nil or name == '' then
    local story, epic = M.story_of(0), M.epic_of(0)
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
  local is_story = vim.tbl_contains(M.stories(), name)
  local is_epic = vim.tbl_contains(M.epics(), name)
  if is_story and is_epic then
    return nil, nil, string.format('%s is both a story and an epic: :%s --story %s or :%s --epic %s', name, command, name, command, name)
  end
  return name, is_epic and 'epic' or 'story'
end

-- M.execute(command, arguments) whose error is one message, 'saga: <what>: <error>';
-- on_result(result, client) gets the rest.
local function execute_or_notify(command, arguments, what, on_result)
  M.execute(command, arguments, function(err, result, client)
    if err then
      notify('saga: ' .. what .. ': ' .. err_text(err), vim.log.levels.ERROR)
      return
    end
    on_result(result, client)
  end)
end

-- The end of a command's reply: msg (when notify is on), then opts.callback(result).
local function reply_done(opts, result, msg)
  if M.config.notify then
    notify(msg, M.config.notify_level)
  end
  if opts.callback then
    opts.callback(result)
  end
end

-- The function(name, opts) of :SagaRun, :SagaStop or :SagaPlan (`command`): f(name,
-- kind, opts) once M._target knows what the name is, a message saying what is wrong
-- when it cannot tell.
local function on_target(command, f)
  return function(name, opts)
    opts = opts or {}
    local kind, err
    name, kind, err = M._target(name, opts, command)
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
  if opts.dry_run or M.config.dry_run then
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
  if (name == nil or name == '') and not M.story_of(0) and not M.epic_of(0) then
    local running, epics = M.running(), M.running_epics()
    if #epics == 1 then
      name, opts.epic = epics[1], true
    elseif #running == 1 then
      name, opts.story = running[1], true
    end
  end
  stop(name, opts)
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

M._plan_lines = plan_lines
--- :SagaPlan [--story | --epic] [story-or-epic] — the execution plan in a scratch buffer;
--- for an epic, each story's run state under it.
M.plan = on_target('SagaPlan', function(name, kind, opts)
  execute_or_notify('showPlan', { { [kind] = name } }, 'plan ' .. name, function(result)
    local buf = M.show_scratch('saga://plan/' .. name, plan_lines(name, result), opts.window)
    if opts.callback then
      opts.callback(buf, result)
    end
  end)
end)

local NEW_USAGE = {
  story = ':SagaNew story <name> [--title T] [--description D] [--epic E] [--blocked-by a,b]',
  task = ':SagaNew task [<story>] <task-id> [--subject S] [--description D] [--blocked-by a,b] [--priority P] [--active-form A] [--guidance G] [--done-when W]',
  epic = ':SagaNew epic <id> [--title T] [--description D]',
}

local NEW_FLAGS = {
  story = { '--title', '--description', '--epic', '--blocked-by' },
  task = { '--subject', '--description', '--blocked-by', '--priority', '--active-form', '--guidance', '--done-when' },
  epic = { '--title', '--description' },
}

-- The createStory/createTask/createEpic argument of `:SagaNew <kind> …`, or nil and an error.
function M._new_argument(kind, args, buf)
  local pos, flags = parse_flags(args)
  local arg = {}
  for k, v in pairs(flags) do
    arg[k] = v
  end
  if arg.blockedBy then
    arg.blockedBy = list_flag(arg.blockedBy)
  end
  if kind == 'task' then
    if #pos == 1 then
      arg.story, arg.id = M.story_of(buf), pos[1]
    else
      arg.story, arg.id = pos[1], pos[2]
    end
    if not arg.story or not arg.id or #pos > 2 then
      return nil, NEW_USAGE.task
    end
  elseif kind == 'story' then
    arg.name = pos[1]
    if not arg.name or #pos > 1 then
      return nil, NEW_USAGE.story
    end
  elseif kind == 'epic' then
    arg.id = pos[1]
    if not arg.id or #pos > 1 then
      return nil, NEW_USAGE.epic
    end
  else
    return nil, 'usage: :SagaNew story|task|epic …'
  end
  return arg
end

--- :SagaNew story|task|epic <args> — creates the file and opens it.
function M.new(kind, args, opts)
  opts = opts or {}
  local arg, usage = M._new_argument(kind, args or {}, 0)
  if not arg then
    notify('saga: ' .. usage, vim.log.levels.ERROR)
    return
  end
  local command = ({ story = 'createStory', task = 'createTask', epic = 'createEpic' })[kind]
  local root = M.root()
  execute_or_notify(command, { arg }, 'new ' .. kind, function(result, client)
    -- {created = [root-relative paths], updated = […], uri = the new file}
    local created = type(result) == 'table' and type(result.created) == 'table' and result.created or {}
    local uri = type(result) == 'table' and type(result.uri) == 'string' and result.uri ~= '' and result.uri or nil
    if not uri and created[1] then
      uri = vim.uri_from_fname((client.config.root_dir or root) .. '/' .. created[1])
    end
    if not uri then
      notify('saga: new ' .. kind .. ': saga-lsp reported no file created (' .. vim.inspect(result) .. ')', vim.log.levels.WARN)
      return
    end
    -- The server also asks to show it (window/showDocument): opened once either way.
    local path = normalize(vim.uri_to_fname(uri))
    if normalize(vim.api.nvim_buf_get_name(0)) ~= path then
      state.opened[path] = uv.now()
      edit_file(path)
    end
    local what = #created > 0 and table.concat(created, ', ') or vim.uri_to_fname(uri)
    if type(result.updated) == 'table' and #result.updated > 0 then
      what = what .. ' (updated ' .. table.concat(result.updated, ', ') .. ')'
    end
    reply_done(opts, result, 'saga: created ' .. what)
  end)
end

-- The quickfix items of a reviewStory result: one per changed file, in the story's
-- worktree while it exists (the branch's version), else in the repository.
function M._review_items(result)
  local dir = (type(result.worktree) == 'string' and result.worktree ~= '') and result.worktree or result.repo
  local items = {}
  for _, f in ipairs(result.files or {}) do
    local text = f.status
    if f.oldPath and f.oldPath ~= vim.NIL and f.oldPath ~= '' then
      text = text .. ' (from ' .. f.oldPath .. ')'
    end
    table.insert(items, { filename = dir .. '/' .. f.path, lnum = 1, col = 1, text = text })
  end
  return items
end

--- :SagaReview [story] — the files the story's branch changed against its base, in the
--- quickfix list (opened), so the work can be read before its PR.
function M.review(story, opts)
  opts = opts or {}
  story = (story ~= nil and story ~= '') and story or M.story_of(0)
  if not story then
    notify('saga: which story? :SagaReview <story>', vim.log.levels.ERROR)
    return
  end
  execute_or_notify('reviewStory', { { story = story } }, 'review ' .. story, function(result)
    local items = M._review_items(result)
    local title = string.format('saga review %s: %s against %s', story, result.branch, result.base)
    vim.fn.setqflist({}, ' ', { title = title, items = items })
    if #items == 0 then
      notify('saga: ' .. result.branch .. ' changed nothing against ' .. result.base, M.config.notify_level)
    else
      leave_float()
      vim.cmd('copen')
    end
    if opts.callback then
      opts.callback(result)
    end
  end)
end

--- :SagaOutput [story] — opens the output file of the story's running (else last) worker.
function M.output(story)
  story = (story ~= nil and story ~= '') and story or M.story_of(0) or M.running()[1]
  if not story then
    notify('saga: which story? :SagaOutput <story>', vim.log.levels.ERROR)
    return
  end
  M.execute('showOutput', { { story = story } }, function(err, result)
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
      edit_file(file)
    end
  end)
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
  return filter(M.stories(), lead)
end

local RUN_FLAGS = { '--story', '--epic', '--max-parallel', '--max-cost', '--after' }

-- Parses `[--story | --epic] [--max-parallel K] [--max-cost USD] [--after ready|merged]
-- [name]` (flags anywhere; `--flag=value` too) into the name and M.run's opts, or an error.
function M._target_args(line, bang)
  local args = M._split_args(line or '')
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
function M._complete_run(lead, line)
  if lead:match('^%-') then
    return filter(RUN_FLAGS, lead)
  end
  local before = M._split_args(line)
  if lead ~= '' then
    table.remove(before)
  end
  if before[#before] == '--after' then
    return filter({ 'ready', 'merged' }, lead)
  end
  local out = M.stories()
  vim.list_extend(out, M.epics())
  return filter(out, lead)
end

local function complete_stop(lead)
  local out, seen = {}, {}
  for _, e in ipairs(M.running_epics()) do
    seen[e] = true
    table.insert(out, e)
  end
  for _, s in ipairs(M.running()) do
    seen[s] = true
    table.insert(out, s)
  end
  for _, s in ipairs(M.stories()) do
    if not seen[s] then
      table.insert(out, s)
    end
  end
  return filter(out, lead)
end

local function complete_plan(lead)
  local out = M.stories()
  vim.list_extend(out, M.epics())
  return filter(out, lead)
end

function M._complete_new(lead, line)
  local before = M._split_args(line)
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
    return filter(NEW_FLAGS[kind] or {}, lead)
  end
  if prev == '--epic' then
    return filter(M.epics(), lead)
  end
  if kind == 'task' and #before == 1 then
    return complete_stories(lead)
  end
  return {}
end

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  -- The name and the flags of :SagaRun, :SagaStop and :SagaPlan; a mistake is a message.
  local function with_target(f)
    return function(o)
      local name, opts, err = M._target_args(o.args, o.bang)
      if err then
        notify('saga: ' .. err, vim.log.levels.ERROR)
        return
      end
      f(name, opts)
    end
  end
  cmd('SagaRun', with_target(M.run), {
    nargs = '*', bang = true, complete = M._complete_run,
    desc = "saga: run a story's worker or an epic (! : dry run with the simulated agent)",
  })
  cmd('SagaStop', with_target(M.stop), {
    nargs = '*', complete = complete_stop, desc = "saga: stop a story's worker or an epic's run",
  })
  cmd('SagaPlan', with_target(M.plan), {
    nargs = '*', complete = complete_plan, desc = 'saga: show the execution plan of a story or epic (an epic: with its run states)',
  })
  cmd('SagaReview', function(o) M.review(o.args) end, {
    nargs = '?', complete = complete_stories, desc = "saga: the files a story's branch changed, in the quickfix list",
  })
  cmd('SagaNew', function(o)
    local args = M._split_args(o.args)
    local kind = table.remove(args, 1)
    M.new(kind, args)
  end, {
    nargs = '+', complete = M._complete_new, desc = 'saga: create a story, task or epic',
  })
  cmd('SagaOutput', function(o) M.output(o.args) end, {
    nargs = '?', complete = complete_stop, desc = "saga: open a worker's output file",
  })
end
M._define_commands = define_commands

--- setup(opts): see :help saga-setup.
function M.setup(opts)
  M.config = config.merge(opts)
  state.setup_done = true
  define_commands()

  local group = vim.api.nvim_create_augroup('saga', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    pattern = { '*.json', '*.jsonc' },
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd('BufEnter', {
    group = group,
    pattern = { '*.json', '*.jsonc' },
    callback = function(args)
      if M.client_for_buf(args.buf) then
        state.last_buf = args.buf
      end
    end,
  })
  -- Buffers loaded before setup (e.g. a lazily loaded plugin).
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

--- Whether setup() has run.
function M.is_setup()
  return state.setup_done
end

--- The last buffer saga-lsp was attached to (for :checkhealth).
function M.last_buffer()
  local buf = state.last_buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  return nil
end

-- M.config is the current options (state.config, which setup() replaces):
-- read, changed or assigned here, it is what the modules use.
return setmetatable(M, {
  __index = function(_, key)
    if key == 'config' then
      return state.config
    end
  end,
  __newindex = function(t, key, value)
    if key == 'config' then
      state.config = value
    else
      rawset(t, key, value)
    end
  end,
})
-- Headless test of the saga Neovim plugin, run by editors/nvim/nvim_test.go
-- (TestPlugin) on the shared harness (internal/testkit/nvim/harness.lua).
--
-- Environment (set by the Go test):
--   SAGA_NVIM_PLUGIN  the plugin folder (editors/nvim), appended to 'runtimepath'
--   SAGA_LSP_SERVER   the saga-lsp binary
--   SAGA_LSP_LOG      the server's --log-file
--   SAGA_WS           a copy of examples/workspace (a git repository; the working directory)
--   SAGA_MISTAKES     a copy of examples/mistakes
--
-- Everything goes through the plugin as a user would: setup(), :edit of
-- .saga files, :SagaPlan, :SagaNew, :SagaRun!, :checkhealth saga. Each part
-- records what it saw (or its error) and the next part still runs; the Go
-- test decides. vim.notify is replaced to capture the plugin's messages.

local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
local result = h.result
result.errors = vim.empty_dict()
local uv = vim.uv or vim.loop
local part, lens_titles, notified = h.part, h.lens_titles, h.notified

local function file_exists(path)
  return uv.fs_stat(path) ~= nil
end

local function buffer_named(name)
  local b = vim.fn.bufnr(name)
  if b == -1 then
    return nil
  end
  return b
end

local saga -- the plugin module

-- Every vim.notify, with the statusline component at that moment.
h.capture_notify(function() return saga and saga.statusline() end)

local progress = {}

-- window/showMessage as it reaches Neovim's handler (the plugin's handler
-- passes on all but the plan its own :SagaPlan shows).
result.show_messages = {}
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, res, ctx, config)
  table.insert(result.show_messages, res and res.message or '')
  return show_message(err, res, ctx, config)
end


h.main(function()
  local plugin = h.env('SAGA_NVIM_PLUGIN', true)
  local server = h.env('SAGA_LSP_SERVER', true)
  local log = h.env('SAGA_LSP_LOG', true)
  local ws = h.env('SAGA_WS', true)
  local mistakes = h.env('SAGA_MISTAKES', true)

  -- The plugin as a package manager installs it: on 'runtimepath', with its
  -- plugin/ script (which runs after -u, so it is sourced here).
  vim.opt.rtp:append(plugin)
  vim.cmd('runtime plugin/saga.lua')
  result.commands_before_setup = vim.fn.exists(':SagaRun') == 2
  saga = require('saga')
  saga.setup({
    cmd = { server, 'serve' },
    log_file = log,
    on_worker_progress = function(w)
      table.insert(progress, h.record(w, { 'story', 'state', 'step', 'done', 'total', 'message' },
        { ms = h.ms(), output_file = w.outputFile, statusline = saga.statusline() }))
    end,
  })
  result.progress = progress
  h.step('setup')

  -- 1. Attach + diagnostics on examples/mistakes.
  part('mistakes', function()
    local file = mistakes .. '/.saga/stories/billing--invoices/send-emails.json'
    local buf = h.edit(file)
    local r = {}
    result.mistakes = r
    if not h.wait(10000, function() return saga.client_for_buf(buf) ~= nil and saga.client_for_buf(buf).initialized end) then
      error('no initialized saga-lsp client attached to ' .. file)
    end
    local client = saga.client_for_buf(buf)
    r.client_id = client.id
    r.root = client.config.root_dir
    r.init_options = client.config.init_options
    h.wait(15000, function()
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        if h.diag_code(d) == 'unknown-dependency' then
          return true
        end
      end
      return false
    end)
    r.diagnostics = h.diagnostics(buf)
  end)

  -- 2. Attach on examples/workspace: a second client (another root), reused for a second file.
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  local story_buf
  part('workspace', function()
    local r = {}
    result.workspace = r
    local task = h.edit(ws .. '/.saga/stories/user-auth--api/login-endpoint.json')
    if not h.wait(10000, function() return saga.client_for_buf(task) ~= nil and saga.client_for_buf(task).initialized end) then
      error('no initialized saga-lsp client attached to the task file')
    end
    local client = saga.client_for_buf(task)
    r.client_id = client.id
    r.root = client.config.root_dir
    -- Count the server's workspace/codeLens/refresh requests (the plugin's handler still answers).
    local refresh = client.handlers['workspace/codeLens/refresh'] or vim.lsp.handlers['workspace/codeLens/refresh']
    result.codelens_refresh_handler = refresh ~= nil
    result.codelens_refreshes = 0
    client.handlers['workspace/codeLens/refresh'] = function(...)
      result.codelens_refreshes = result.codelens_refreshes + 1
      return refresh(...)
    end
    story_buf = h.edit(ws .. '/.saga/stories/user-auth--api/story.json')
    h.wait(5000, function() return saga.client_for_buf(story_buf) ~= nil end)
    local c = saga.client_for_buf(story_buf)
    r.second_file_client_id = c and c.id
    r.story_of_buffer = saga.story_of(story_buf)
    local n = 0
    for _, client in ipairs(h.get_clients()) do
      if client.name == 'saga-lsp' then
        n = n + 1
      end
    end
    r.saga_clients = n
  end)

  -- 3. Code lenses in story.json (refreshed on attach / BufEnter).
  part('codelens', function()
    local titles = {}
    result.codelens = titles
    if story_buf == nil then
      error('no story buffer')
    end
    -- Until the lens counts the story's tasks from the loaded workspace (5, one done).
    h.wait(5000, function() return lens_titles(story_buf):find('1/5 tasks done', 1, true) ~= nil end)
    for _, l in ipairs(vim.lsp.codelens.get(story_buf)) do
      table.insert(titles, l.command and l.command.title or '')
    end
    local client = saga.client_for_buf(story_buf)
    result.codelens_refresh_supported = vim.tbl_get and vim.tbl_get(client.config.capabilities, 'workspace', 'codeLens', 'refreshSupport') or
      (client.config.capabilities.workspace and client.config.capabilities.workspace.codeLens and client.config.capabilities.workspace.codeLens.refreshSupport)
  end)

  -- 4. :SagaPlan user-auth → a scratch buffer with the plan.
  part('plan', function()
    local r = {}
    result.plan = r
    vim.cmd('SagaPlan user-auth')
    local name = 'saga://plan/user-auth'
    h.wait(10000, function() return buffer_named(name) ~= nil end)
    local b = buffer_named(name)
    if b then
      r.buffer = vim.api.nvim_buf_get_name(b)
      r.lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
      r.current = vim.api.nvim_get_current_buf() == b
      r.float = vim.api.nvim_win_get_config(0).relative ~= ''
      r.buftype = vim.bo[b].buftype
    end
    -- Close the float (its `q` mapping) so the next command runs from a file window.
    if r.current then
      vim.cmd('normal q')
    end
  end)

  -- 5. :SagaNew task … → the file on disk, opened.
  part('new', function()
    local r = {}
    result.new = r
    local file = ws .. '/.saga/stories/user-auth--api/rate-limit.json'
    r.file = file
    local n0 = #result.notifications
    vim.cmd('SagaNew task user-auth--api rate-limit --subject "Rate-limit the login endpoint" --blocked-by login-endpoint --priority high')
    h.wait(10000, function() return (file_exists(file) and vim.api.nvim_buf_get_name(0) == file) or notified(n0, 'saga: new') end)
    r.exists = file_exists(file)
    r.buffer = vim.api.nvim_buf_get_name(0)
    if r.exists then
      r.content = table.concat(vim.fn.readfile(file), '\n')
    end
    r.attached = saga.client_for_buf(0) ~= nil
    -- :SagaNew story with a quoted title and an epic.
    local story = ws .. '/.saga/stories/user-auth--audit/story.json'
    r.story_file = story
    n0 = #result.notifications
    vim.cmd([[SagaNew story audit --epic user-auth --title 'Audit log']])
    h.wait(10000, function() return (file_exists(story) and vim.api.nvim_buf_get_name(0) == story) or notified(n0, 'saga: new') end)
    r.story_exists = file_exists(story)
    r.story_buffer = vim.api.nvim_buf_get_name(0)
    -- :SagaNew epic without a title: the server makes one.
    local epic = ws .. '/.saga/epics/billing/epic.json'
    r.epic_file = epic
    n0 = #result.notifications
    vim.cmd('SagaNew epic billing')
    h.wait(10000, function() return (file_exists(epic) and vim.api.nvim_buf_get_name(0) == epic) or notified(n0, 'saga: new') end)
    r.epic_buffer = vim.api.nvim_buf_get_name(0)
    r.epic_content = file_exists(epic) and table.concat(vim.fn.readfile(epic), '\n') or nil
  end)

  -- 5b. :SagaDashboard! → the server's dashboard, its URL shown (not opened).
  part('dashboard', function()
    local r = {}
    result.dashboard = r
    local n0 = #result.notifications
    vim.cmd('SagaDashboard!')
    h.wait(10000, function() return notified(n0, 'saga: dashboard') end)
    for i = n0 + 1, #result.notifications do
      if result.notifications[i].msg:sub(1, 15) == 'saga: dashboard' then
        r.message = result.notifications[i].msg
      end
    end
    -- A second call: the same dashboard.
    n0 = #result.notifications
    saga.dashboard({ print = true, callback = function(res) r.again = res end })
    h.wait(10000, function() return r.again ~= nil end)
  end)

  -- 6. :SagaRun! (dry run) from a file of the story → saga/workerProgress to completed.
  part('run', function()
    local r = {}
    result.run = r
    h.edit(ws .. '/.saga/stories/user-auth--api/story.json')
    local buf = vim.api.nvim_get_current_buf()
    local before = #result.notifications
    local lenses_seen, stop_watching = h.watch_lens_titles(buf)
    r.lenses = lenses_seen
    vim.cmd('SagaRun!')
    local final = { completed = true, failed = true, timeout = true, blocked = true, stopped = true }
    local function ended()
      for _, p in ipairs(progress) do
        if p.story == 'user-auth--api' and final[p.state] then
          return true
        end
      end
      return false
    end
    -- Until the worker ends, or an error message ("saga: run …") says it will not start.
    h.wait(30000, function() return ended() or notified(before, 'saga: run ') end)
    r.completed = ended()
    -- After the run the server asks for a refresh: the story's lenses offer a new run and the output.
    h.wait(5000, function()
      local t = lens_titles(buf)
      return t:find('Show output', 1, true) ~= nil and t:find('▶ Run story', 1, true) ~= nil
    end)
    stop_watching()
    r.lens_after = lens_titles(buf)
    r.statusline_after = saga.statusline()
    r.running_after = saga.running()
    r.notifications = {}
    for i = before + 1, #result.notifications do
      table.insert(r.notifications, result.notifications[i])
    end
    local w = saga.workers()['user-auth--api']
    r.output_file = w and w.outputFile

    -- The "Show output" lens, run as a user would: vim.lsp.codelens.run() on
    -- its line (vim.ui.select, stubbed, picks it among the line's lenses) →
    -- the plugin's client-side command → showOutput → window/showDocument.
    local lens_line
    for _, l in ipairs(vim.lsp.codelens.get(buf)) do
      if l.command and l.command.title == 'Show output' then
        lens_line = l.range.start.line
      end
    end
    if lens_line then
      vim.api.nvim_win_set_cursor(0, { lens_line + 1, 0 })
      local select = vim.ui.select
      vim.ui.select = function(items, opts, on_choice)
        for _, item in ipairs(items) do
          if opts.format_item(item) == 'Show output' then
            return on_choice(item)
          end
        end
        on_choice(nil)
      end
      vim.lsp.codelens.run()
      vim.ui.select = select
      h.wait(5000, function() return vim.api.nvim_buf_get_name(0) == r.output_file end)
      r.output_buffer = vim.api.nvim_buf_get_name(0)
    end

    -- :SagaStop when nothing runs any more: an error message, no crash.
    local n0 = #result.notifications
    vim.cmd('SagaStop user-auth--api')
    h.wait(5000, function() return notified(n0, 'saga: stop') end)
    r.stop_message = result.notifications[n0 + 1] and result.notifications[n0 + 1].msg
  end)

  -- 7. :checkhealth saga.
  part('health', function()
    -- What saga-lsp doctor sees (Neovim's environment): a claude new
    -- enough and logged in, gh installed but logged out.
    vim.env.SAGA_CLAUDE = os.getenv('SAGA_TEST_CLAUDE')
    vim.env.SAGA_GH = os.getenv('SAGA_TEST_GH')
    vim.env.GH_STANDIN_AUTH = 'none'
    vim.fn.writefile({ '{"claudeAiOauth": {"accessToken": "secret"}}' }, os.getenv('CLAUDE_CONFIG_DIR') .. '/.credentials.json')
    vim.cmd('checkhealth saga')
    local b = vim.api.nvim_get_current_buf()
    result.health = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  end)

  -- 8. :SagaInfo, :SagaLog, :SagaRestart.
  part('server', function()
    local r = { want_log = log } -- the log_file setup() was given
    result.server = r
    vim.cmd('SagaInfo')
    r.info = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    r.info_buffer = vim.api.nvim_buf_get_name(0)
    vim.cmd('close')
    vim.cmd('SagaLog')
    r.log_buffer = vim.api.nvim_buf_get_name(0)
    vim.cmd('close')
    local buf = story_buf
    local before = saga.client_for_buf(buf)
    r.client_before = before and before.id
    local done
    saga.restart(function(ids) done = ids end)
    if not h.wait(15000, function() return done ~= nil end) then
      error(':SagaRestart did not finish')
    end
    h.wait(10000, function()
      local c = saga.client_for_buf(buf)
      return c ~= nil and c.initialized
    end)
    local after = saga.client_for_buf(buf)
    r.client_after = after and after.id
    r.old_stopped = before ~= nil and h.stopped(before)
    r.restarted = #done
  end)

  -- 9. Shut the clients down.
  part('stop', function()
    local clients = {}
    for _, client in ipairs(h.get_clients()) do
      if client.name == 'saga-lsp' then
        table.insert(clients, client)
        h.stop(client)
      end
    end
    result.stopped = h.wait(5000, function()
      for _, c in ipairs(clients) do
        if not h.stopped(c) then
          return false
        end
      end
      return true
    end)
  end)
end)

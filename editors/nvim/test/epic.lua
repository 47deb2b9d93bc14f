-- Headless test of the plugin's epic runs against the real server, run by
-- editors/nvim/nvim_test.go (TestPluginEpic) on the shared harness
-- (internal/testkit/nvim/harness.lua).
--
-- Environment (set by the Go test):
--   SAGA_NVIM_PLUGIN  the plugin folder (editors/nvim), appended to 'runtimepath'
--   SAGA_LSP_SERVER   the saga-lsp binary
--   SAGA_LSP_LOG      the server's --log-file
--   SAGA_WS           a git copy of testdata/epics (the working directory): epics
--                     site (run with the simulated agent), shop (the stand-in
--                     claude: shop--a crashes, shop--b waits on it, shop--c
--                     records a blocker) and slow (the stand-in going slowly)
--
-- As a user would: :SagaRun! site from its epic.json, the statusline and the
-- lenses while it runs, :SagaPlan site, :SagaReview site--about, :SagaRun
-- shop (the warnings when a run needs you), :SagaRun slow then :SagaStop
-- slow. Each part records what it saw (or its error); the Go test decides.
-- Waits are for what the plugin shows, never for time.

local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
local result = h.result
result.epic_progress = {}
result.errors = vim.empty_dict()
local part, lens_titles, notified = h.part, h.lens_titles, h.notified

local saga -- the plugin module

-- Every vim.notify, with the statusline component at that moment.
h.capture_notify(function() return saga and saga.statusline() end)

-- :SagaPlan epic: the lines of its plan buffer (nil when none shows), its float closed.
local function show_plan(epic)
  local name = 'saga://plan/' .. epic
  vim.cmd('SagaPlan ' .. epic)
  h.wait(10000, function() return vim.fn.bufnr(name) ~= -1 end)
  local b = vim.fn.bufnr(name)
  local lines = b ~= -1 and vim.api.nvim_buf_get_lines(b, 0, -1, false) or nil
  if vim.api.nvim_win_get_config(0).relative ~= '' then
    vim.cmd('close')
  end
  return lines
end

local function ended(epic)
  local e = saga.epic_runs()[epic]
  return e ~= nil and e.state ~= nil and e.state ~= 'running'
end


h.main(function()
  local plugin = h.env('SAGA_NVIM_PLUGIN', true)
  local ws = h.env('SAGA_WS', true)
  vim.opt.rtp:append(plugin)
  vim.cmd('runtime plugin/saga.lua')
  saga = require('saga')
  saga.setup({
    cmd = { h.env('SAGA_LSP_SERVER', true), 'serve' },
    log_file = h.env('SAGA_LSP_LOG', true),
    on_epic_progress = function(e)
      table.insert(result.epic_progress, h.record(e, { 'epic', 'state', 'done', 'total', 'running', 'held', 'failed' },
        { ms = h.ms(), statusline = saga.statusline() }))
    end,
  })
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  h.step('setup')

  -- 1. :SagaRun! site from its epic.json: the lenses and the statusline follow the run.
  part('run', function()
    local r = {}
    result.run = r
    local buf = h.edit(ws .. '/.saga/epics/site/epic.json')
    -- Ready once the server has loaded the workspace (before, its children
    -- are not known yet).
    if not h.wait(15000, function() return lens_titles(buf):find('○ ready', 1, true) ~= nil end) then
      error('no ▶ Run epic lens with a ready story: ' .. lens_titles(buf))
    end
    local seen, stop = h.watch_lens_titles(buf)
    r.lenses = seen
    local n0 = #result.notifications
    vim.cmd('SagaRun!')
    h.wait(60000, function() return ended('site') or notified(n0, 'saga: run ') end)
    r.state = saga.epic_runs().site and saga.epic_runs().site.state
    -- A dry run is never the stories' progress: after it the lenses show
    -- their own states again and the epic's last run as a dry run.
    h.wait(10000, function()
      local t = lens_titles(buf)
      return t:find('last run: a dry run, completed', 1, true) ~= nil and t:find('○ ready', 1, true) ~= nil
    end)
    stop()
    r.lens_after = lens_titles(buf)
    r.statusline_after = saga.statusline()
  end)

  -- 2. :SagaPlan site: the plan, then each story's run state.
  part('plan', function()
    local r = {}
    result.plan = r
    r.lines = show_plan('site')
  end)

  -- 3. :SagaReview site--about: its changed files in the quickfix list.
  part('review', function()
    local r = {}
    result.review = r
    local n0 = #result.notifications
    vim.cmd('SagaReview site--about')
    h.wait(10000, function()
      return vim.fn.getqflist({ title = 1 }).title:find('saga review', 1, true) ~= nil or notified(n0, 'saga: review')
    end)
    r.title = vim.fn.getqflist({ title = 1 }).title
    r.items = {}
    for _, it in ipairs(vim.fn.getqflist()) do
      table.insert(r.items, { file = vim.api.nvim_buf_get_name(it.bufnr), text = it.text })
    end
    r.quickfix_open = vim.bo.buftype == 'quickfix'
    vim.cmd('cclose')
  end)

  -- 4. :SagaRun shop: a story fails, one is held by it, one is blocked — each said once.
  part('needs_you', function()
    local r = {}
    result.needs_you = r
    local buf = h.edit(ws .. '/.saga/epics/shop/epic.json')
    h.wait(15000, function() return lens_titles(buf):find('▶ Run epic', 1, true) ~= nil end)
    r.from = #result.notifications
    vim.cmd('SagaRun shop')
    h.wait(60000, function() return ended('shop') or notified(r.from, 'saga: run ') end)
    r.state = saga.epic_runs().shop and saga.epic_runs().shop.state
    h.wait(10000, function() return lens_titles(buf):find('last run: failed', 1, true) ~= nil end)
    r.lens_after = lens_titles(buf)
    -- Reopening the file and asking for the plan again says nothing new.
    vim.cmd('edit!')
    show_plan('shop')
  end)

  -- 5. :SagaRun slow, then :SagaStop slow while it runs.
  part('stop', function()
    local r = {}
    result.stop = r
    vim.cmd('SagaRun slow')
    h.wait(30000, function()
      local e = saga.epic_runs().slow
      return e ~= nil and e.state == 'running' and #(e.running or {}) > 0
    end)
    r.statusline_running = saga.statusline()
    local n0 = #result.notifications
    vim.cmd('SagaStop slow')
    h.wait(30000, function() return ended('slow') and notified(n0, 'saga: stop') end)
    r.state = saga.epic_runs().slow and saga.epic_runs().slow.state
    for i = n0 + 1, #result.notifications do
      if result.notifications[i].msg:find('^saga: stop') then
        r.message = result.notifications[i].msg
      end
    end
    -- The epic's end can come before its story's worker has reported its
    -- own (it is being stopped too): the statusline is empty once it has.
    h.wait(10000, function() return saga.statusline() == '' end)
    r.statusline_after = saga.statusline()
  end)

  part('shutdown', function()
    for _, client in ipairs(h.get_clients()) do
      if client.name == 'saga-lsp' then
        h.stop(client)
      end
    end
  end)
end)

-- Headless Neovim, no plugin: run a story from its code lens and watch it
-- live. Run by nvim_test.go (TestNeovimRunStory) on the shared harness
-- (internal/testkit/nvim/harness.lua).
--
-- Environment (set by the Go test):
--   SAGA_LSP_SERVER  path of the saga-lsp binary
--   SAGA_LSP_ROOT    workspace root (a git copy of examples/workspace)
--   SAGA_LSP_STORY   the story to run
--   SAGA_LSP_LOG     the server's --log-file
-- and, for the server and the worker it starts in tmux: SAGA_SESSION_DIR,
-- SAGA_TMUX_SOCKET, SAGA_LSP_BIN, CLAUDE_CONFIG_DIR, SAGA_GH, SAGA_CLAUDE.
--
-- The client opts in to the saga/* notifications (init_options
-- sagaNotifications) and records them with handlers; it asks for the
-- story.json's code lenses, takes the "▶ Run story" lens's command and
-- arguments and runs it with workspace/executeCommand — a real run, with
-- the stand-in claude (a dry run's statuses are never the story's) —
-- then waits for the worker to end and for its tasks' last
-- saga/taskStatus.

local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
local result = h.result
result.progress = {}
result.status = {}

h.main(function()
  local root = h.env('SAGA_LSP_ROOT', true)
  local story = h.env('SAGA_LSP_STORY', true)
  local path = root .. '/.saga/stories/' .. story .. '/story.json'
  local buf = h.edit(path)
  h.step('opened')

  local client_id, client = h.start({
    name = 'saga-lsp',
    cmd = { h.env('SAGA_LSP_SERVER', true), 'serve', '--log-file', h.env('SAGA_LSP_LOG', true) },
    root_dir = root,
    init_options = { sagaNotifications = true },
    handlers = {
      ['saga/workerProgress'] = function(_, params)
        params.ms = h.ms()
        table.insert(result.progress, params)
      end,
      ['saga/taskStatus'] = function(_, params)
        params.ms = h.ms()
        table.insert(result.status, params)
      end,
    },
  }, buf)
  if client.server_capabilities and client.server_capabilities.executeCommandProvider then
    result.commands = client.server_capabilities.executeCommandProvider.commands
  end
  h.step('initialized')

  -- The story's lenses; the one that runs it.
  local lenses
  local lens
  h.wait(10000, function()
    lenses = h.request(buf, client_id, 'textDocument/codeLens', { textDocument = { uri = vim.uri_from_bufnr(buf) } })
    for _, l in ipairs(lenses or {}) do
      if l.command and l.command.title == '▶ Run story' then
        lens = l
        return true
      end
    end
    return false
  end)
  result.lenses = {}
  for _, l in ipairs(lenses or {}) do
    table.insert(result.lenses, l.command and l.command.title or '')
  end
  if lens == nil then
    error('no ▶ Run story lens on ' .. path)
  end
  result.lens_command = lens.command.command
  result.lens_arguments = lens.command.arguments
  h.step('lens')

  -- Run it, as the lens would.
  local args = vim.deepcopy(lens.command.arguments)
  result.run = h.request(buf, client_id, 'workspace/executeCommand',
    { command = lens.command.command, arguments = args }, 30000)
  h.step('executed')

  -- Wait for the worker's end …
  local done = h.wait(90000, function()
    local last = result.progress[#result.progress]
    return last ~= nil and last.state ~= 'starting' and last.state ~= 'running'
  end)
  if not done then
    error('the worker did not end within 90 s')
  end
  -- … and for the saga/taskStatus that completes each of the story's tasks
  -- (the last ones may come after the worker's end).
  local tasks = {}
  for _, p in ipairs(vim.fn.glob(root .. '/.saga/stories/' .. story .. '/*.json', false, true)) do
    local id = vim.fn.fnamemodify(p, ':t:r')
    if id ~= 'story' then
      table.insert(tasks, id)
    end
  end
  h.wait(10000, function()
    local final = {}
    for _, s in ipairs(result.status) do
      final[s.task] = s.to
    end
    for _, id in ipairs(tasks) do
      if final[id] ~= 'completed' then
        return false
      end
    end
    return true
  end)
  h.step('ended')

  h.shutdown(client)
  h.step('stopped')
end)

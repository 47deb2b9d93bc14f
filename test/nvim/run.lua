-- Headless Neovim harness: run a story from its code lens and watch it live.
-- Run by nvim_test.go (TestNeovimRunStory) as
--
--   nvim --headless --clean -u run.lua
--
-- Environment (set by the Go test):
--   SAGA_LSP_SERVER  path of the saga-lsp binary
--   SAGA_LSP_ROOT    workspace root (a git copy of examples/workspace)
--   SAGA_LSP_STORY   the story to run
--   SAGA_LSP_RESULT  where to write the JSON result
--   SAGA_LSP_LOG     optional: the server's --log-file
-- and, for the server and the worker it starts in tmux: SAGA_SESSION_DIR,
-- SAGA_TMUX_SOCKET, SAGA_LSP_BIN, CLAUDE_CONFIG_DIR, SAGA_GH.
--
-- The client opts in to the saga/* notifications (init_options
-- sagaNotifications) and records them with handlers; it asks for the
-- story.json's code lenses, takes the "▶ Run story" lens's command and
-- arguments, adds dryRun = true (the worker's built-in agent: no claude
-- needed) and runs it with workspace/executeCommand, then waits for the
-- worker to end. Written for Neovim 0.7 (start_client), newer versions too.

local result = { steps = {}, progress = {}, status = {} }

local function step(name)
  table.insert(result.steps, name)
end

local function env(name, required)
  local v = os.getenv(name)
  if required and (v == nil or v == '') then
    error('environment variable ' .. name .. ' is not set')
  end
  return v
end

local function sync_request(buf, client_id, method, params, ms)
  local responses, err = vim.lsp.buf_request_sync(buf, method, params, ms or 5000)
  if responses == nil then
    error(method .. ': no response: ' .. tostring(err))
  end
  local r = responses[client_id]
  if r == nil then
    error(method .. ': no response from saga-lsp')
  end
  local rerr = r.error or r.err
  if rerr ~= nil and rerr ~= vim.NIL then
    error(method .. ': error response: ' .. vim.inspect(rerr))
  end
  if r.result == vim.NIL then
    return nil
  end
  return r.result
end

local exited = false
local t0 = vim.loop.hrtime()
local function ms()
  return math.floor((vim.loop.hrtime() - t0) / 1e6)
end

local function run()
  local server = env('SAGA_LSP_SERVER', true)
  local root = env('SAGA_LSP_ROOT', true)
  local story = env('SAGA_LSP_STORY', true)
  local logfile = env('SAGA_LSP_LOG', false)
  result.nvim_version = tostring(vim.version().major) .. '.' .. vim.version().minor .. '.' .. vim.version().patch

  local cmd = { server, 'serve' }
  if logfile and logfile ~= '' then
    table.insert(cmd, '--log-file')
    table.insert(cmd, logfile)
  end
  local path = root .. '/.saga/stories/' .. story .. '/story.json'
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  step('opened')

  local config = {
    name = 'saga-lsp',
    cmd = cmd,
    root_dir = root,
    init_options = { sagaNotifications = true },
    handlers = {
      ['saga/workerProgress'] = function(_, params)
        params.ms = ms()
        table.insert(result.progress, params)
      end,
      ['saga/taskStatus'] = function(_, params)
        params.ms = ms()
        table.insert(result.status, params)
      end,
    },
    on_exit = function(code, signal)
      exited = true
      result.exit_code = code
      result.exit_signal = signal
    end,
  }
  local client_id
  if vim.lsp.start then
    client_id = vim.lsp.start(config, { bufnr = buf })
  else
    client_id = vim.lsp.start_client(config)
    if client_id == nil then
      error('vim.lsp.start_client failed')
    end
    if not vim.lsp.buf_attach_client(buf, client_id) then
      error('vim.lsp.buf_attach_client failed')
    end
  end
  local client = vim.lsp.get_client_by_id(client_id)
  if not vim.wait(10000, function() return client.initialized end, 50) then
    error('saga-lsp did not finish initialize within 10 s')
  end
  if client.server_capabilities and client.server_capabilities.executeCommandProvider then
    result.commands = client.server_capabilities.executeCommandProvider.commands
  end
  step('initialized')

  -- The story's lenses; the one that runs it.
  local lenses
  local lens
  vim.wait(10000, function()
    lenses = sync_request(buf, client_id, 'textDocument/codeLens', { textDocument = { uri = vim.uri_from_bufnr(buf) } })
    for _, l in ipairs(lenses or {}) do
      if l.command and l.command.title == '▶ Run story' then
        lens = l
        return true
      end
    end
    return false
  end, 200)
  result.lenses = {}
  for _, l in ipairs(lenses or {}) do
    table.insert(result.lenses, l.command and l.command.title or '')
  end
  if lens == nil then
    error('no ▶ Run story lens on ' .. path)
  end
  result.lens_command = lens.command.command
  result.lens_arguments = lens.command.arguments
  step('lens')

  -- Run it, as the lens would, with dryRun added to its argument.
  local args = vim.deepcopy(lens.command.arguments)
  args[1].dryRun = true
  result.run = sync_request(buf, client_id, 'workspace/executeCommand',
    { command = lens.command.command, arguments = args }, 30000)
  step('executed')

  -- Wait for the worker's end.
  local done = vim.wait(90000, function()
    local last = result.progress[#result.progress]
    return last ~= nil and last.state ~= 'starting' and last.state ~= 'running'
  end, 50)
  if not done then
    error('the worker did not end within 90 s')
  end
  -- A moment for the last taskStatus notifications.
  vim.wait(300, function() return false end, 50)
  step('ended')

  client.stop()
  if not vim.wait(5000, function() return exited end, 50) then
    result.stop_error = 'saga-lsp did not exit within 5 s of shutdown/exit'
  end
  step('stopped')
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  result.error = tostring(err)
end

local out = os.getenv('SAGA_LSP_RESULT') or 'saga-lsp-nvim-run-result.json'
local f = io.open(out, 'w')
if f then
  local encoded_ok, encoded = pcall(vim.fn.json_encode, result)
  if not encoded_ok then
    encoded = vim.fn.json_encode({ error = 'encoding the result: ' .. tostring(encoded) .. '; ' .. tostring(result.error) })
  end
  f:write(encoded)
  f:close()
else
  io.stderr:write('run.lua: cannot write ' .. out .. '\n')
end
vim.cmd('qa!')

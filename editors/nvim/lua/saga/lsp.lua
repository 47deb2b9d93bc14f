-- saga.lsp: the saga-lsp clients — their configuration (handlers,
-- capabilities, initialization options), starting one per workspace root and
-- attaching it to `.saga/` buffers, finding them, and running the server's
-- workspace/executeCommand commands once a client is initialized.

local M = {}

local uv = vim.uv or vim.loop

local codelens = require('saga.codelens')
local compat = require('saga.compat')
local window_handlers = require('saga.handlers')
local message = require('saga.message')
local progress = require('saga.progress')
local state = require('saga.state')
local workspace = require('saga.workspace')

local config = require('saga.config')
local CLIENT_NAME = config.client_name
local notify, err_text = message.notify, message.err_text

--- The running saga-lsp client of a root, or nil.
function M.client_for_root(root)
  for _, client in ipairs(compat.all_clients()) do
    if config.is_client(client) and client.config.root_dir == root and not compat.client_stopped(client) then
      return client
    end
  end
  return nil
end

--- The saga-lsp client attached to a buffer, or nil.
function M.client_for_buf(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  for _, client in ipairs(compat.all_clients()) do
    if config.is_client(client) and vim.lsp.buf_is_attached(buf, client.id) then
      return client
    end
  end
  return nil
end

local function on_attach(client, buf)
  state.last_buf = buf
  if state.config.codelens then
    local group = vim.api.nvim_create_augroup('saga_codelens_' .. buf, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'BufWritePost', 'InsertLeave' }, {
      group = group,
      buffer = buf,
      callback = function(args)
        codelens.refresh(args.buf)
      end,
    })
    codelens.refresh(buf)
  end
  if state.config.codelens_keymap then
    vim.api.nvim_buf_set_keymap(buf, 'n', state.config.codelens_keymap, '<cmd>lua vim.lsp.codelens.run()<CR>', { noremap = true, silent = true, desc = 'saga: run code lens' })
  end
  if state.config.on_attach then
    state.config.on_attach(client, buf)
  end
end

local function client_config(root)
  local opts = state.config
  local cmd = vim.deepcopy(opts.cmd)
  if opts.log_file then
    table.insert(cmd, '--log-file')
    table.insert(cmd, opts.log_file)
  end
  local handlers = {
    ['saga/workerProgress'] = function(err, result, ctx) progress.on_worker_progress(result, ctx) end,
    ['saga/taskStatus'] = function(err, result, ctx) progress.on_task_status(result, ctx) end,
    ['saga/epicProgress'] = function(err, result, ctx) progress.on_epic_progress(result, ctx) end,
    ['window/showMessage'] = window_handlers.on_show_message,
    ['$/progress'] = codelens.on_progress,
  }
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.window = caps.window or {}
  if not vim.lsp.handlers['workspace/codeLens/refresh'] then
    handlers['workspace/codeLens/refresh'] = codelens.on_refresh
  end
  caps.workspace.codeLens = { refreshSupport = true }
  -- Ours on every version: it leaves floating windows and does not open a
  -- file :SagaNew has just opened.
  handlers['window/showDocument'] = window_handlers.on_show_document
  caps.window.showDocument = { support = true }
  if opts.capabilities then
    caps = vim.tbl_deep_extend('force', caps, opts.capabilities)
  end
  return {
    name = CLIENT_NAME,
    cmd = cmd,
    root_dir = root,
    workspace_folders = root and { { uri = vim.uri_from_fname(root), name = root } } or nil,
    capabilities = caps,
    init_options = {
      sagaNotifications = true,
      commandPrefix = opts.command_prefix,
    },
    handlers = handlers,
    -- Required here, not above: the lens commands run through M.execute.
    commands = require('saga.actions').lens_commands(opts.command_prefix),
    on_attach = on_attach,
    -- 0.11 keeps the server's name and version (client.server_info); :SagaInfo shows them on 0.7 too.
    on_init = function(client, result)
      client.server_info = client.server_info or (type(result) == 'table' and result.serverInfo) or nil
    end,
    flags = { debounce_text_changes = 150 },
  }
end

--- The configuration lsp/saga_lsp.lua gives vim.lsp.config (Neovim 0.11+):
--- setup()'s, from the current options, for the JSON buffers of `.saga/`
--- files only, rooted at the folder that holds `.saga/` (vim.lsp.enable
--- names its clients saga_lsp, after the file).
function M.native_config()
  local c = client_config(nil)
  c.name = nil
  c.filetypes = { 'json', 'jsonc' }
  -- 0.11's root_dir(bufnr, on_dir): no on_dir, no client for the buffer.
  c.root_dir = function(buf, on_dir)
    local name = vim.api.nvim_buf_get_name(buf)
    local root = vim.bo[buf].buftype == '' and workspace.is_saga_file(name) and workspace.root_of(name)
    if root then
      on_dir(root)
    end
  end
  return c
end

-- Starts a client that is attached to no buffer (for commands run from outside `.saga/`).
local function start_detached(root)
  local config = client_config(root)
  local id
  if compat.has('0.11') then
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
  if vim.bo[buf].buftype ~= '' or not workspace.is_saga_file(name) then
    return nil
  end
  local root = workspace.root_of(name)
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
    notify('saga: could not start ' .. table.concat(state.config.cmd, ' ') .. ' (see :checkhealth saga)', vim.log.levels.ERROR)
  end
  return id
end

-- Calls fn(client) once a client for the current context is initialized:
-- the current buffer's client, else the root's (started when needed).
local function with_client(fn)
  local client = M.client_for_buf(0)
  if not client then
    local root = workspace.root()
    if not root then
      notify('saga: no .saga/ folder here (open a file under .saga/ or :cd into the workspace)', vim.log.levels.ERROR)
      return
    end
    client = M.client_for_root(root) or start_detached(root)
    if not client then
      notify('saga: could not start ' .. table.concat(state.config.cmd, ' '), vim.log.levels.ERROR)
      return
    end
  end
  local deadline = uv.now() + 15000
  local function go()
    if compat.client_stopped(client) then
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
    local command = state.config.command_prefix .. name
    local provider = client.server_capabilities and client.server_capabilities.executeCommandProvider
    if type(provider) == 'table' and type(provider.commands) == 'table' and not vim.tbl_contains(provider.commands, command) then
      callback({ message = 'saga-lsp does not offer the command ' .. command .. ' (offers: ' .. table.concat(provider.commands, ', ') .. ')' }, nil, client)
      return
    end
    local key = client.id .. ' ' .. name
    state.pending[key] = (state.pending[key] or 0) + 1
    compat.client_request(client, 'workspace/executeCommand', { command = command, arguments = arguments }, function(err, result)
      state.pending[key] = state.pending[key] - 1
      if result == vim.NIL then
        result = nil
      end
      callback(err, result, client)
    end)
  end)
end

--- The session dir the client's server named in its initialize result
--- (capabilities.experimental.saga.sessionDir), or nil: where the workers'
--- output and events files are. Never computed here: only the server knows
--- its environment's default.
function M.session_dir(client)
  local caps = client and client.server_capabilities
  local exp = type(caps) == 'table' and caps.experimental or nil
  local saga = type(exp) == 'table' and exp.saga or nil
  local dir = type(saga) == 'table' and saga.sessionDir or nil
  if type(dir) == 'string' and dir ~= '' then
    return dir
  end
  return nil
end

-- M.execute(command, arguments) whose error is one message, 'saga: <what>: <error>';
-- on_result(result, client) gets the rest.
function M.execute_or_notify(command, arguments, what, on_result)
  M.execute(command, arguments, function(err, result, client)
    if err then
      notify('saga: ' .. what .. ': ' .. err_text(err), vim.log.levels.ERROR)
      return
    end
    on_result(result, client)
  end)
end

return M

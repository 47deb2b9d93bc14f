-- saga.server: the running saga-lsp clients from the user's side —
-- :SagaRestart (stop them, start them again for the same buffers), :SagaLog
-- (the server's log) and :SagaInfo (what runs, where, with which options).

local M = {}

local uv = vim.uv or vim.loop

local compat = require('saga.compat')
local config = require('saga.config')
local lsp = require('saga.lsp')
local message = require('saga.message')
local progress = require('saga.progress')
local state = require('saga.state')
local ui = require('saga.ui')

local notify = message.notify

--- The running saga-lsp clients (setup()'s and vim.lsp.enable('saga_lsp')'s).
function M.clients()
  local out = {}
  for _, client in ipairs(compat.all_clients()) do
    if config.is_client(client) and not compat.client_stopped(client) then
      table.insert(out, client)
    end
  end
  return out
end

local function attached_buffers(client)
  local bufs = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.lsp.buf_is_attached(b, client.id) then
      table.insert(bufs, b)
    end
  end
  return bufs
end

local function stop(client)
  if compat.has('0.11') then
    client:stop()
  else
    client.stop()
  end
end

--- Stops every saga-lsp client and starts them again for the buffers they
--- served (a new server binary, a changed option, a stuck server).
--- on_done(new_client_ids), when given, runs once they are attached.
function M.restart(on_done)
  local clients = M.clients()
  if #clients == 0 then
    notify('saga: no saga-lsp client is running (open a JSON file under .saga/)', vim.log.levels.WARN)
    return
  end
  local bufs, native = {}, false
  for _, c in ipairs(clients) do
    vim.list_extend(bufs, attached_buffers(c))
    native = native or c.name == config.native_name
    stop(c)
  end
  local deadline = uv.now() + 10000
  local function again()
    for _, c in ipairs(clients) do
      if not compat.client_stopped(c) and uv.now() < deadline then
        vim.defer_fn(again, 30)
        return
      end
    end
    local ids = {}
    if native and vim.lsp.enable then
      -- vim.lsp.enable attaches the enabled config to the open buffers again.
      vim.lsp.enable(config.native_name)
    end
    for _, b in ipairs(bufs) do
      if vim.api.nvim_buf_is_valid(b) then
        local id = (lsp.client_for_buf(b) or {}).id or lsp.attach(b)
        if id and not vim.tbl_contains(ids, id) then
          table.insert(ids, id)
        end
      end
    end
    notify(string.format('saga: restarted saga-lsp (%d client(s), %d buffer(s))', #ids, #bufs), state.config.notify_level)
    if on_done then
      on_done(ids)
    end
  end
  again()
end

--- The file the server logs to: setup({log_file}), else Neovim's LSP log
--- (where the server's stderr goes).
function M.log_path()
  return state.config.log_file or vim.lsp.get_log_path()
end

--- Opens the server's log in a split, at its end.
function M.log()
  local path = M.log_path()
  if vim.fn.filereadable(path) == 0 then
    notify('saga: no log yet at ' .. path, vim.log.levels.WARN)
    return
  end
  vim.cmd('botright split ' .. vim.fn.fnameescape(path))
  vim.bo.autoread = true
  vim.cmd('normal! G')
end

--- The lines :SagaInfo shows.
function M.info_lines()
  local lines = { 'saga-lsp', '' }
  local clients = M.clients()
  if #clients == 0 then
    table.insert(lines, 'no saga-lsp client is running (open a JSON file under .saga/; :checkhealth saga)')
  end
  for _, c in ipairs(clients) do
    local info = c.server_info or (c.initialize_result and c.initialize_result.serverInfo) or {}
    table.insert(lines, string.format('client %d (%s), root %s', c.id, c.name, tostring(c.config.root_dir)))
    table.insert(lines, '  command      ' .. table.concat(c.config.cmd or {}, ' '))
    table.insert(lines, '  server       ' .. (info.name and (info.name .. ' ' .. (info.version or '')) or (c.initialized and 'initialized' or 'starting')))
    table.insert(lines, '  session dir  ' .. (lsp.session_dir(c) or '-'))
    local names = {}
    for _, b in ipairs(attached_buffers(c)) do
      table.insert(names, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':~:.'))
    end
    table.insert(lines, string.format('  buffers      %d%s', #names, #names > 0 and (': ' .. table.concat(names, ', ')) or ''))
  end
  table.insert(lines, '')
  table.insert(lines, 'log          ' .. M.log_path() .. ' (:SagaLog)')
  table.insert(lines, 'runs         ' .. (progress.statusline() ~= '' and progress.statusline() or 'none'))
  table.insert(lines, 'autostart    ' .. tostring(state.config.autostart) .. ', command prefix ' .. state.config.command_prefix)
  return lines
end

--- Shows the clients, their servers and options in a scratch buffer.
function M.info()
  ui.show_scratch('saga://info', M.info_lines())
end

return M

-- The shared harness of saga-lsp's headless Neovim tests. testkit.RunNvim
-- (nvim.go) runs a test script as
--
--   nvim --headless --clean -u script.lua
--
-- with SAGA_NVIM_HARNESS naming this file and SAGA_NVIM_RESULT the JSON
-- result file. A script loads the harness, records what it sees in
-- h.result and ends with h.main(run):
--
--   local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
--   h.main(function() ... end)
--
-- Written for Neovim 0.7 (Debian 12's package, which CI installs); newer
-- versions are handled where the API differs (vim.lsp.start, client methods,
-- vim.str_utfindex's 0.11 signature, get_clients). Whatever happens, a result
-- is written ({"error": ...} on a Lua error) and Neovim quits; the Go test
-- decides what is missing.

local h = {}
local uv = vim.uv or vim.loop
local t0 = uv.hrtime()

h.result = { steps = {} }

-- Milliseconds since the harness loaded.
function h.ms()
  return math.floor((uv.hrtime() - t0) / 1e6)
end

-- Records that a step ended (name@ms).
function h.step(name)
  table.insert(h.result.steps, string.format('%s@%dms', name, h.ms()))
end

-- The environment variable name; an error when required and unset.
function h.env(name, required)
  local v = os.getenv(name)
  if required and (v == nil or v == '') then
    error('environment variable ' .. name .. ' is not set')
  end
  return v
end

-- Waits up to ms for cond, checking every 20 ms; whether it held.
function h.wait(ms, cond)
  return vim.wait(ms, cond, 20)
end

-- Runs fn as one named part of a test: its error goes to
-- h.result.errors[name] and the next part still runs; the Go test decides.
function h.part(name, fn)
  h.result.errors = h.result.errors or vim.empty_dict()
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    h.result.errors[name] = tostring(err)
  end
  h.step(name)
end

-- The titles of buf's code lenses, joined by " | ".
function h.lens_titles(buf)
  local titles = {}
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(titles, l.command and l.command.title or '')
  end
  return table.concat(titles, ' | ')
end

-- Records the titles of buf's code lenses each time they change (a list it
-- returns) until stop, the second value, is called.
function h.watch_lens_titles(buf)
  local seen = {}
  local timer = uv.new_timer()
  timer:start(0, 20, vim.schedule_wrap(function()
    local t = h.lens_titles(buf)
    if seen[#seen] ~= t then
      table.insert(seen, t)
    end
  end))
  return seen, function()
    timer:stop()
    timer:close()
  end
end

-- The fields of t named in keys, with extra's: what a test records of a
-- notification or a diagnostic for the Go test to read.
function h.record(t, keys, extra)
  local out = {}
  for _, k in ipairs(keys) do
    out[k] = t[k]
  end
  for k, v in pairs(extra or {}) do
    out[k] = v
  end
  return out
end

-- Replaces vim.notify: every message goes to h.result.notifications
-- ({ms, msg, level, statusline}), with what statusline() returns then.
function h.capture_notify(statusline)
  h.result.notifications = h.result.notifications or {}
  vim.notify = function(msg, level)
    table.insert(h.result.notifications, {
      ms = h.ms(),
      msg = tostring(msg),
      level = level or vim.log.levels.INFO,
      statusline = statusline() or '',
    })
  end
end

-- Whether a captured message starting with prefix came after message
-- number since.
function h.notified(since, prefix)
  for i = since + 1, #h.result.notifications do
    if h.result.notifications[i].msg:sub(1, #prefix) == prefix then
      return true
    end
  end
  return false
end

-- Opens path in the current window and returns its buffer.
function h.edit(path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  return vim.api.nvim_get_current_buf()
end

function h.nvim_version()
  local v = vim.version()
  return string.format('%d.%d.%d', v.major, v.minor, v.patch)
end

-- The LSP code of a vim.diagnostic entry: top-level `code` (0.7+), or
-- `user_data.lsp.code` (0.6/0.7 compatibility field; in newer versions
-- user_data.lsp is the whole LSP diagnostic).
function h.diag_code(d)
  if d.code ~= nil and d.code ~= vim.NIL then
    return d.code
  end
  local lsp = d.user_data and d.user_data.lsp
  if lsp and lsp.code ~= nil and lsp.code ~= vim.NIL then
    return lsp.code
  end
  return nil
end

-- The buffer's diagnostics as plain tables (code as a string).
function h.diagnostics(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = h.diag_code(d)
    table.insert(out, h.record(d, { 'message', 'severity', 'source', 'lnum', 'col', 'end_lnum', 'end_col' },
      { code = code ~= nil and tostring(code) or nil }))
  end
  return out
end

-- UTF-16 code units before byte offset `byte` (0-based) of `line`.
function h.utf16_index(line, byte)
  if vim.fn.has('nvim-0.11') == 1 then
    return vim.str_utfindex(line, 'utf-16', byte)
  end
  local _, u16 = vim.str_utfindex(line, byte)
  return u16
end

-- The result of one client's response from buf_request_sync (0.7 stores the
-- error as `error`, newer versions as `err`); an error when there is none.
function h.request(buf, client_id, method, params, ms)
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

h.get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients

-- Starts an LSP client with config attached to buf and waits until it is
-- initialized; returns its id and the client. The server's exit is recorded
-- in h.result (exit_code, exit_signal).
function h.start(config, buf)
  config.on_exit = function(code, signal)
    h.result.exit_code = code
    h.result.exit_signal = signal
  end
  local client_id
  if vim.lsp.start then
    -- Neovim 0.8+: starts (or reuses) the client and attaches the buffer.
    client_id = vim.lsp.start(config, { bufnr = buf })
  else
    -- Neovim 0.7: no vim.lsp.start.
    client_id = vim.lsp.start_client(config)
    if client_id == nil then
      error('vim.lsp.start_client failed')
    end
    if not vim.lsp.buf_attach_client(buf, client_id) then
      error('vim.lsp.buf_attach_client failed')
    end
  end
  if client_id == nil then
    error('could not start ' .. config.name)
  end
  local client = vim.lsp.get_client_by_id(client_id)
  -- `initialized` is 0.7's flag; newer versions have it too.
  if not h.wait(10000, function() return client.initialized end) then
    error(config.name .. ' did not finish initialize within 10 s')
  end
  return client_id, client
end

-- client:stop() / client.stop(), client:is_stopped() (0.11 made them methods).
local methods = vim.fn.has('nvim-0.11') == 1

function h.stop(c)
  if methods then c:stop() else c.stop() end
end

function h.stopped(c)
  if methods then return c:is_stopped() end
  return c.is_stopped()
end

-- Stops the client h.start started and waits for its server to exit; one
-- still running 5 s later is recorded as h.result.stop_error.
function h.shutdown(client)
  h.stop(client)
  if not h.wait(5000, function() return h.result.exit_code ~= nil end) then
    h.result.stop_error = client.name .. ' did not exit within 5 s of shutdown/exit'
  end
end

-- Runs run, records a Lua error in result.error, writes the result to
-- $SAGA_NVIM_RESULT and quits Neovim.
function h.main(run)
  h.result.nvim_version = h.nvim_version()
  local ok, err = xpcall(run, debug.traceback)
  if not ok then
    h.result.error = tostring(err)
  end
  local out = h.env('SAGA_NVIM_RESULT', false) or 'saga-nvim-result.json'
  local f = io.open(out, 'w')
  if f then
    -- vim.fn.json_encode writes an empty Lua table as [] (vim.json would write {}).
    local encoded_ok, encoded = pcall(vim.fn.json_encode, h.result)
    if not encoded_ok then
      encoded = vim.fn.json_encode({ error = 'encoding the result: ' .. tostring(encoded) .. '; ' .. tostring(h.result.error) })
    end
    f:write(encoded)
    f:close()
  else
    io.stderr:write('harness: cannot write ' .. out .. '\n')
  end
  vim.cmd('qa!')
end

return h

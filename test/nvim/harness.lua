-- Headless Neovim harness for saga-lsp, run by nvim_test.go as
--
--   nvim --headless --clean -u harness.lua
--
-- Environment (set by the Go test):
--   SAGA_LSP_SERVER  path of the saga-lsp binary
--   SAGA_LSP_ROOT    workspace root (a copy of examples/mistakes)
--   SAGA_LSP_RESULT  where to write the JSON result
--   SAGA_LSP_LOG     optional: the server's --log-file
--
-- Written for Neovim 0.7 (Debian 12's package, which CI installs). Newer
-- versions are handled where the API differs: vim.lsp.start (0.8+) instead of
-- start_client + buf_attach_client, vim.str_utfindex's 0.11 signature,
-- vim.lsp.util.show_document when jump_to_location is gone.
--
-- Whatever happens, a result file is written ({"error": ...} on a Lua error)
-- and Neovim quits; the Go test reports what is missing.

local result = { steps = {} }

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

-- UTF-16 code units before byte offset `byte` (0-based) of `line`.
local function utf16_index(line, byte)
  if vim.fn.has('nvim-0.11') == 1 then
    return vim.str_utfindex(line, 'utf-16', byte)
  end
  local _, u16 = vim.str_utfindex(line, byte)
  return u16
end

-- The LSP code of a vim.diagnostic entry: top-level `code` (0.7+), or
-- `user_data.lsp.code` (0.6/0.7 compatibility field; in newer versions
-- user_data.lsp is the whole LSP diagnostic).
local function diag_code(d)
  if d.code ~= nil and d.code ~= vim.NIL then
    return d.code
  end
  local lsp = d.user_data and d.user_data.lsp
  if lsp and lsp.code ~= nil and lsp.code ~= vim.NIL then
    return lsp.code
  end
  return nil
end

-- Hover contents (MarkupContent | MarkedString | MarkedString[]) as text.
local function hover_text(contents)
  if contents == nil or contents == vim.NIL then
    return nil
  end
  if type(contents) == 'string' then
    return contents
  end
  if contents.value ~= nil then -- MarkupContent or {language, value}
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    local t = hover_text(c)
    if t then
      table.insert(parts, t)
    end
  end
  return table.concat(parts, '\n')
end

-- The single client's response from buf_request_sync (0.7 stores the error
-- as `error`, newer versions as `err`).
local function sync_request(buf, client_id, method, params)
  local responses, err = vim.lsp.buf_request_sync(buf, method, params, 5000)
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

local function plain_range(range)
  if range == nil or range == vim.NIL then
    return nil
  end
  return {
    start = { line = range.start.line, character = range.start.character },
    ['end'] = { line = range['end'].line, character = range['end'].character },
  }
end

local exited = false

-- Every publishDiagnostics for the opened file, in order: {ms, version, codes}.
-- The server may publish more than once while it loads the workspace; the
-- harness reads the buffer's diagnostics once they have settled.
local publications = {}
local last_publish -- hrtime of the latest publication for the opened file
local watched_uri
local t0 = vim.loop.hrtime()

local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, res, ctx, config)
  if res and watched_uri and res.uri == watched_uri then
    last_publish = vim.loop.hrtime()
    local codes = {}
    for _, d in ipairs(res.diagnostics or {}) do
      table.insert(codes, string.format('%s@%d:%d', tostring(d.code), d.range.start.line, d.range.start.character))
    end
    table.insert(publications, {
      ms = math.floor((last_publish - t0) / 1e6),
      version = res.version ~= vim.NIL and res.version or nil,
      codes = table.concat(codes, ' '),
    })
  end
  return default_publish(err, res, ctx, config)
end

local function run()
  local server = env('SAGA_LSP_SERVER', true)
  local root = env('SAGA_LSP_ROOT', true)
  local logfile = env('SAGA_LSP_LOG', false)
  result.nvim_version = tostring(vim.version().major) .. '.' .. vim.version().minor .. '.' .. vim.version().patch

  local cmd = { server, 'serve' }
  if logfile and logfile ~= '' then
    table.insert(cmd, '--log-file')
    table.insert(cmd, logfile)
  end

  -- Open the file from here: a file named on the command line is not loaded
  -- yet while -u runs, and attaching to it would fail silently.
  local path = root .. '/.saga/stories/billing--invoices/send-emails.json'
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  result.file = vim.api.nvim_buf_get_name(buf)
  watched_uri = vim.uri_from_bufnr(buf)
  result.publications = publications
  step('opened')

  local config = {
    name = 'saga-lsp',
    cmd = cmd,
    root_dir = root,
    on_exit = function(code, signal)
      exited = true
      result.exit_code = code
      result.exit_signal = signal
    end,
  }
  local client_id
  if vim.lsp.start then
    -- Neovim 0.8+: starts (or reuses) the client and attaches the current buffer.
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
    error('could not start saga-lsp')
  end
  local client = vim.lsp.get_client_by_id(client_id)
  step('started')

  if not vim.wait(10000, function() return client.initialized end, 50) then
    -- `initialized` is 0.7's flag; newer versions have it too.
    error('saga-lsp did not finish initialize within 10 s')
  end
  result.offset_encoding = client.offset_encoding
  step('initialized')

  -- Diagnostics: pushed after didOpen (and for the whole workspace). Wait
  -- until there are some and no new publication has come for 300 ms, so that
  -- a publication made before the workspace finished loading is superseded.
  local quiet_ns = 300 * 1e6
  local got = vim.wait(15000, function()
    return #vim.diagnostic.get(buf) > 0
      and last_publish ~= nil
      and vim.loop.hrtime() - last_publish >= quiet_ns
  end, 50)
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = diag_code(d)
    table.insert(result.diagnostics, {
      code = code ~= nil and tostring(code) or nil,
      message = d.message,
      severity = d.severity,
      source = d.source,
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
    })
  end
  if not got then
    error('no settled diagnostics for ' .. path .. ' within 15 s')
  end
  step('diagnostics')

  -- The position of the blockedBy entry "create-pdf" (inside the string).
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local row, byte
  for i, l in ipairs(lines) do
    if l:find('"blockedBy"', 1, true) then
      local s = l:find('"create-pdf"', 1, true)
      if s then
        row = i - 1
        byte = s + 2 -- 1-based quote at s → 0-based byte s is 'c'; +2 lands on 'e'
        break
      end
    end
  end
  if row == nil then
    error('no blockedBy entry "create-pdf" in ' .. path)
  end
  local position = { line = row, character = utf16_index(lines[row + 1], byte) }
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = position,
  }
  result.position = position

  -- Hover. Failures here are recorded, not raised, so that definition is
  -- still tried.
  local ok, hover = pcall(sync_request, buf, client_id, 'textDocument/hover', params)
  if not ok then
    result.hover_error = tostring(hover)
  elseif hover ~= nil then
    result.hover = hover_text(hover.contents)
  end
  step('hover')

  -- Definition: Location | Location[] | LocationLink[] | null.
  local ok2, def = pcall(sync_request, buf, client_id, 'textDocument/definition', params)
  if not ok2 then
    result.definition_error = tostring(def)
  elseif def ~= nil then
    local loc = def
    if def.uri == nil and def.targetUri == nil then
      loc = def[1]
    end
    if loc ~= nil then
      result.definition = {
        uri = loc.uri or loc.targetUri,
        range = plain_range(loc.range or loc.targetSelectionRange),
      }
      local jumped
      if vim.lsp.util.jump_to_location then
        jumped = vim.lsp.util.jump_to_location(loc, client.offset_encoding)
      else
        -- Neovim 0.12 removed jump_to_location.
        jumped = vim.lsp.util.show_document(loc, client.offset_encoding, { focus = true })
      end
      local cursor = vim.api.nvim_win_get_cursor(0)
      result.jump = {
        ok = jumped and true or false,
        buffer = vim.api.nvim_buf_get_name(0),
        line = cursor[1] - 1, -- 0-based
        col = cursor[2], -- 0-based byte
      }
    end
  end
  step('definition')

  -- shutdown + exit.
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

local out = os.getenv('SAGA_LSP_RESULT') or 'saga-lsp-nvim-result.json'
local f = io.open(out, 'w')
if f then
  -- vim.fn.json_encode writes an empty Lua table as [] (vim.json would write {}).
  local encoded_ok, encoded = pcall(vim.fn.json_encode, result)
  if not encoded_ok then
    encoded = vim.fn.json_encode({ error = 'encoding the result: ' .. tostring(encoded) .. '; ' .. tostring(result.error) })
  end
  f:write(encoded)
  f:close()
else
  io.stderr:write('harness: cannot write ' .. out .. '\n')
end
vim.cmd('qa!')

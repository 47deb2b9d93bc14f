-- Headless Neovim, no plugin: start saga-lsp on a file, read its
-- diagnostics, hover and follow a blockedBy entry. Run by nvim_test.go
-- (TestNeovim) on the shared harness (internal/testkit/nvim/harness.lua).
--
-- Environment (set by the Go test):
--   SAGA_LSP_SERVER  path of the saga-lsp binary
--   SAGA_LSP_ROOT    workspace root (a copy of examples/mistakes)
--   SAGA_LSP_LOG     the server's --log-file
--
-- vim.lsp.util.show_document is used where jump_to_location is gone (0.12).

local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
local result = h.result

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

local function plain_range(range)
  if range == nil or range == vim.NIL then
    return nil
  end
  return {
    start = { line = range.start.line, character = range.start.character },
    ['end'] = { line = range['end'].line, character = range['end'].character },
  }
end

-- Every publishDiagnostics for the opened file, in order: {ms, version,
-- codes}, and the order of the server's messages: the diagnostics read are
-- those of the first publication after the server logged that it loaded the
-- workspace (a publication before that would be the bug the Go test looks
-- for).
local publications = {}
local seq = 0 -- messages seen
local loaded_seq -- the "saga-lsp: loaded" log message's
local publish_seq -- the latest publication's for the opened file
local watched_uri

local default_log = vim.lsp.handlers['window/logMessage']
vim.lsp.handlers['window/logMessage'] = function(err, res, ctx, config)
  seq = seq + 1
  if res and loaded_seq == nil and tostring(res.message):find('saga-lsp: loaded', 1, true) then
    loaded_seq = seq
  end
  return default_log(err, res, ctx, config)
end

local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, res, ctx, config)
  seq = seq + 1
  if res and watched_uri and res.uri == watched_uri then
    publish_seq = seq
    local codes = {}
    for _, d in ipairs(res.diagnostics or {}) do
      table.insert(codes, string.format('%s@%d:%d', tostring(d.code), d.range.start.line, d.range.start.character))
    end
    table.insert(publications, {
      ms = h.ms(),
      version = res.version ~= vim.NIL and res.version or nil,
      codes = table.concat(codes, ' '),
    })
  end
  return default_publish(err, res, ctx, config)
end

h.main(function()
  local root = h.env('SAGA_LSP_ROOT', true)

  -- Open the file from here: a file named on the command line is not loaded
  -- yet while -u runs, and attaching to it would fail silently.
  local path = root .. '/.saga/stories/billing--invoices/send-emails.json'
  local buf = h.edit(path)
  result.file = vim.api.nvim_buf_get_name(buf)
  watched_uri = vim.uri_from_bufnr(buf)
  result.publications = publications
  h.step('opened')

  local client_id, client = h.start({
    name = 'saga-lsp',
    cmd = { h.env('SAGA_LSP_SERVER', true), 'serve', '--log-file', h.env('SAGA_LSP_LOG', true) },
    root_dir = root,
  }, buf)
  result.offset_encoding = client.offset_encoding
  h.step('initialized')

  -- Diagnostics: pushed after didOpen (and for the whole workspace) once
  -- the workspace has loaded.
  local got = h.wait(15000, function()
    return loaded_seq ~= nil and publish_seq ~= nil and publish_seq > loaded_seq and #vim.diagnostic.get(buf) > 0
  end)
  result.diagnostics = h.diagnostics(buf)
  if not got then
    error('no diagnostics for ' .. path .. ' after the workspace loaded, within 15 s')
  end
  h.step('diagnostics')

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
  local position = { line = row, character = h.utf16_index(lines[row + 1], byte) }
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = position,
  }
  result.position = position

  -- Hover. Failures here are recorded, not raised, so that definition is
  -- still tried.
  local ok, hover = pcall(h.request, buf, client_id, 'textDocument/hover', params)
  if not ok then
    result.hover_error = tostring(hover)
  elseif hover ~= nil then
    result.hover = hover_text(hover.contents)
  end
  h.step('hover')

  -- Definition: Location | Location[] | LocationLink[] | null.
  local ok2, def = pcall(h.request, buf, client_id, 'textDocument/definition', params)
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
  h.step('definition')

  h.shutdown(client)
  h.step('stopped')
end)

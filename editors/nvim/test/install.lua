-- The install specs of editors/nvim/README.md, run as the plugin manager
-- would run them, by nvim_test.go (TestInstallSpecs), one manager a run:
--
--   lazy.nvim  the spec table (the README's ```lua block that starts with
--              `{` and names 'saga-ai/saga-lsp'), evaluated; its config
--              function called with the plugin object lazy.nvim passes
--              (`dir` = where it cloned the repository) after start-up.
--              lazy.nvim sources only <dir>/plugin, so editors/nvim/plugin
--              is not sourced: setup() must be enough.
--   vim-plug   the README's `Plug '…', {…}` line: vim-plug puts <dir>/<rtp>
--              on 'runtimepath' before start-up sources plugin/ (emulated:
--              rtp append, then :runtime! plugin/**/*.lua), then the
--              README's `lua …` line after plug#end().
--
-- Environment: SAGA_SPEC (lazy.nvim | vim-plug), SAGA_README (the README),
-- SAGA_CLONE (a copy of the repository's editors/nvim at
-- <clone>/editors/nvim, without doc/tags), SAGA_WS (a workspace with one
-- mistake; saga-lsp on PATH).

local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
local result = h.result

local function readme_blocks(lang)
  local text = table.concat(vim.fn.readfile(h.env('SAGA_README', true)), '\n')
  local out = {}
  for body in text:gmatch('```' .. lang .. '\n(.-)\n```') do
    table.insert(out, body)
  end
  return out
end

h.main(function()
  local spec = h.env('SAGA_SPEC', true)
  local clone = h.env('SAGA_CLONE', true)
  local ws = h.env('SAGA_WS', true)
  result.spec = spec

  if spec == 'lazy.nvim' then
    local found
    for _, b in ipairs(readme_blocks('lua')) do
      if b:match("^{%s*'saga%-ai/saga%-lsp'") then
        found = b
      end
    end
    if not found then
      error("README.md has no lazy.nvim spec (a ```lua block starting with { 'saga-ai/saga-lsp')")
    end
    result.source = found
    local t = assert(loadstring('return ' .. found))()
    result.lazy = t.lazy
    t.config({ dir = clone, name = 'saga-lsp' }, t.opts or {})
  elseif spec == 'vim-plug' then
    local found
    for _, b in ipairs(readme_blocks('vim')) do
      if b:match("^Plug 'saga%-ai/saga%-lsp'") then
        found = b
      end
    end
    if not found then
      error("README.md has no vim-plug spec (a ```vim block starting with Plug 'saga-ai/saga-lsp')")
    end
    result.source = found
    local opts = vim.fn.eval(found:match("^Plug '[^']+',%s*(%b{})"))
    vim.opt.rtp:append(clone .. '/' .. opts.rtp)
    vim.cmd('runtime! plugin/**/*.lua')
    result.commands_before_setup = vim.fn.exists(':SagaRun') == 2
    for line in found:gmatch('[^\n]+') do
      if line:match('^lua ') then
        vim.cmd(line)
      end
    end
  else
    error('SAGA_SPEC=' .. spec)
  end

  local saga = require('saga')
  result.setup = saga.is_setup()
  result.commands = { vim.fn.exists(':SagaRun'), vim.fn.exists(':SagaInfo'), vim.fn.exists(':SagaRestart') }
  -- :help saga works: the tags were generated in the clone.
  result.tags_file = vim.fn.filereadable(clone .. '/editors/nvim/doc/tags') == 1
  local ok, err = pcall(vim.cmd, 'help saga-setup')
  result.help = ok and vim.fn.expand('%:t') or tostring(err)
  if ok then
    vim.cmd('close')
  end
  -- A .saga file gets a client with diagnostics (saga-lsp from PATH).
  local buf = h.edit(ws .. '/.saga/stories/user-auth--api/logout-endpoint.json')
  h.wait(10000, function() local c = saga.client_for_buf(buf); return c ~= nil and c.initialized end)
  h.wait(15000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if h.diag_code(d) == 'unknown-dependency' then
        return true
      end
    end
    return false
  end)
  result.diagnostics = h.diagnostics(buf)
  local c = saga.client_for_buf(buf)
  if c then
    h.stop(c)
  end
end)

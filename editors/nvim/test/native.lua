-- lsp/saga_lsp.lua used the way Neovim 0.11+ uses an lsp/<name>.lua, run by
-- nvim_test.go (TestNativeConfig). On a Neovim without vim.lsp.config (0.7,
-- Debian's, in CI) the two functions are stood in for, after Neovim 0.11's
-- documented behaviour (:help lsp-config, :help vim.lsp.enable()):
--   vim.lsp.config(name, cfg)  merges cfg over that name's configuration;
--   vim.lsp.config[name]       the configuration: every lsp/<name>.lua on
--                              'runtimepath' merged in order, then what
--                              vim.lsp.config(name, …) set;
--   vim.lsp.enable(name)       on FileType of a buffer whose filetype is in
--                              `filetypes` (and for the buffers already
--                              open), calls root_dir(bufnr, on_dir) when it is
--                              a function; on_dir(root) starts — or reuses — a
--                              client named `name` with that root_dir and
--                              attaches the buffer; no on_dir, no client.
-- On 0.11+ the real ones are used.
--
-- Environment: SAGA_NVIM_PLUGIN, SAGA_LSP_SERVER, SAGA_LSP_LOG, SAGA_MISTAKES.

local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
local result = h.result

local stubbed = vim.lsp.config == nil
if stubbed then
  local overrides, enabled = {}, {}
  local function resolve(name)
    local cfg = {}
    for _, f in ipairs(vim.api.nvim_get_runtime_file('lsp/' .. name .. '.lua', true)) do
      cfg = vim.tbl_deep_extend('force', cfg, dofile(f))
    end
    return vim.tbl_deep_extend('force', cfg, overrides[name] or {})
  end
  vim.lsp.config = setmetatable({}, {
    __call = function(_, name, cfg)
      overrides[name] = vim.tbl_deep_extend('force', overrides[name] or {}, cfg)
    end,
    __index = function(_, name) return resolve(name) end,
  })
  local function start(name, buf)
    local cfg = resolve(name)
    if not vim.tbl_contains(cfg.filetypes or {}, vim.bo[buf].filetype) then
      return
    end
    local function on_dir(root)
      cfg.name, cfg.root_dir = name, root
      for _, c in ipairs(h.get_clients()) do
        if c.name == name and c.config.root_dir == root and not h.stopped(c) then
          vim.lsp.buf_attach_client(buf, c.id)
          return
        end
      end
      local id = vim.lsp.start_client(cfg)
      if id then
        vim.lsp.buf_attach_client(buf, id)
      end
    end
    if type(cfg.root_dir) == 'function' then
      cfg.root_dir(buf, on_dir)
    elseif cfg.root_dir then
      on_dir(cfg.root_dir)
    end
  end
  vim.lsp.enable = function(name)
    enabled[name] = true
    vim.api.nvim_create_autocmd('FileType', {
      callback = function(args) start(name, args.buf) end,
    })
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) then
        start(name, b)
      end
    end
  end
end

h.main(function()
  result.stubbed = stubbed
  local server = h.env('SAGA_LSP_SERVER', true)
  local mistakes = h.env('SAGA_MISTAKES', true)
  vim.cmd('filetype on')
  vim.opt.rtp:append(h.env('SAGA_NVIM_PLUGIN', true))
  local saga = require('saga')
  -- The commands and options; the client comes from vim.lsp.enable.
  saga.setup({ autostart = false, cmd = { server, 'serve' }, log_file = h.env('SAGA_LSP_LOG', true) })
  vim.lsp.config('saga_lsp', { init_options = { commandPrefix = 'saga.' } })
  vim.lsp.enable('saga_lsp')

  local buf = h.edit(mistakes .. '/.saga/stories/billing--invoices/send-emails.json')
  if not h.wait(10000, function() local c = saga.client_for_buf(buf); return c ~= nil and c.initialized end) then
    error('no initialized client attached to send-emails.json')
  end
  local c = saga.client_for_buf(buf)
  result.client = { name = c.name, root = c.config.root_dir, cmd = c.config.cmd, init_options = c.config.init_options, filetypes = c.config.filetypes }
  h.wait(15000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if h.diag_code(d) == 'unknown-dependency' then
        return true
      end
    end
    return false
  end)
  result.diagnostics = h.diagnostics(buf)

  -- JSON outside .saga/ gets no client.
  local other = mistakes .. '/package.json'
  vim.fn.writefile({ '{"name": "x"}' }, other)
  local obuf = h.edit(other)
  h.wait(300, function() return false end)
  result.other_attached = saga.client_for_buf(obuf) ~= nil

  -- The plugin's commands run through the native client: :SagaPlan.
  local plan
  saga.execute('showPlan', { { story = 'billing--invoices' } }, function(err, res, client)
    plan = { err = err and tostring(err.message or err), client = client and client.name, text = type(res) == 'table' and res.text or nil }
  end)
  h.wait(10000, function() return plan ~= nil end)
  result.plan = plan
  h.stop(c)
end)

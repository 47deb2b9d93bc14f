-- :checkhealth saga
--
-- Neovim 0.10+ has vim.health.start/ok/warn/error/info; 0.8–0.9 have
-- vim.health.report_*; 0.7 has the `health` Lua module (report_*), itself a
-- wrapper of the health#report_* Vim functions.

local M = {}

local function reporter()
  local h = vim.health
  if h == nil or (h.start == nil and h.report_start == nil) then
    local ok, mod = pcall(require, 'health')
    h = ok and mod or nil
  end
  local function pick(new, old, vimfn)
    if h and h[new] then
      return h[new]
    end
    if h and h[old] then
      return h[old]
    end
    return function(msg, ...)
      vim.fn[vimfn](msg, ...)
    end
  end
  return {
    start = pick('start', 'report_start', 'health#report_start'),
    ok = pick('ok', 'report_ok', 'health#report_ok'),
    info = pick('info', 'report_info', 'health#report_info'),
    warn = pick('warn', 'report_warn', 'health#report_warn'),
    error = pick('error', 'report_error', 'health#report_error'),
  }
end

local function first_line(cmd)
  local ok, out = pcall(vim.fn.systemlist, cmd)
  if not ok or vim.v.shell_error ~= 0 or type(out) ~= 'table' then
    return nil
  end
  return out[1]
end

-- What a run needs, as `saga-lsp doctor --format json` checks it (the same
-- checks as `run`'s preflight and VS Code's "SAGA: Doctor";
-- docs/commands.md#doctor): each check's level becomes ok, warn or error
-- (a check that could not be made offline a warning), its fix the advice.
function M.check_doctor(r, exe, root)
  local cmd = { exe, 'doctor', '--format', 'json' }
  if root then
    vim.list_extend(cmd, { '--root', root })
  end
  local ok, out = pcall(vim.fn.system, cmd)
  local decode = (vim.json and vim.json.decode) or vim.fn.json_decode
  local okj, rep = pcall(decode, ok and out or '')
  if not ok or not okj or type(rep) ~= 'table' or type(rep.checks) ~= 'table' then
    r.error('`saga-lsp doctor --format json` gave no report: ' .. tostring(ok and out or 'not run'),
      { 'run saga-lsp doctor in a terminal; an older saga-lsp has no doctor: update it' })
    return
  end
  for _, c in ipairs(rep.checks) do
    local msg = c.name .. ': ' .. c.detail
    local advice = (c.fix and c.fix ~= '') and { c.fix } or nil
    if c.level == 'ok' then
      r.ok(msg)
    elseif c.level == 'error' then
      r.error(msg, advice)
    elseif c.level == 'unchecked' then
      r.warn(msg .. ' (not checked)', advice)
    else
      r.warn(msg, advice)
    end
  end
end

function M.check()
  local r = reporter()
  local saga = require('saga')
  local config = saga.config

  r.start('saga: Neovim')
  local v = vim.version()
  local version = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.7') == 1 then
    r.ok('Neovim ' .. version)
  else
    r.error('Neovim ' .. version .. ': saga needs 0.7 or later')
  end
  if saga.is_setup() then
    r.ok("require('saga').setup() has run")
  else
    r.warn("require('saga').setup() has not run: saga-lsp starts only after it", { "call require('saga').setup({}) in your config" })
  end

  r.start('saga: programs')
  local exe = config.cmd[1]
  if vim.fn.executable(exe) == 1 then
    local path = vim.fn.exepath(exe)
    local ver = first_line({ exe, 'version' })
    r.ok(string.format('saga-lsp: %s (%s)', path ~= '' and path or exe, ver or 'version unknown'))
  else
    r.error('saga-lsp is not executable: ' .. exe, {
      'install it: go install github.com/saga-ai/saga-lsp/cmd/saga-lsp@latest (or make install)',
      "or point setup({cmd = {'/path/to/saga-lsp'}}) at it",
    })
  end
  r.start('saga: workspace')
  local buf = saga.last_buffer()
  local root = buf and saga.root(buf) or saga.root_of(vim.fn.getcwd())
  if root then
    r.ok('workspace root: ' .. root .. (buf and (' (from ' .. vim.api.nvim_buf_get_name(buf) .. ')') or ' (from the working directory)'))
  else
    r.warn('no .saga/ folder found at or above ' .. vim.fn.getcwd(), { 'open a file under .saga/ or :cd into the workspace' })
  end

  local found = false
  for _, client in ipairs(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) do
    if require('saga.config').is_client(client) then
      found = true
      local bufs = {}
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.lsp.buf_is_attached(b, client.id) then
          table.insert(bufs, b)
        end
      end
      local msg = string.format('client %d attached to %d buffer(s), root %s', client.id, #bufs, tostring(client.config.root_dir))
      local dir = saga.session_dir(client)
      if dir then
        msg = msg .. ', session dir ' .. dir
      end
      if not client.initialized then
        r.warn(msg .. ': not initialized')
      elseif buf and vim.lsp.buf_is_attached(buf, client.id) then
        r.ok(msg .. ', including ' .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':~:.'))
      else
        r.ok(msg)
      end
    end
  end
  if not found then
    r.warn('no saga-lsp client is running', { 'open a JSON file under .saga/ after setup()' })
  end

  local running = saga.running()
  if #running > 0 then
    r.info('workers: ' .. saga.statusline())
  end

  if vim.fn.executable(exe) == 1 then
    r.start('saga: what a run needs (saga-lsp doctor)')
    M.check_doctor(r, exe, root)
  end
end

return M

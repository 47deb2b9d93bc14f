-- saga.dashboard: :SagaDashboard — the workspace's dashboard (live web pages
-- of the backlog and its runs), served by the language server in its own
-- process (saga.openDashboard), opened in the browser.

local M = {}

local lsp = require('saga.lsp')
local message = require('saga.message')
local state = require('saga.state')

local notify = message.notify

--- :SagaDashboard[!] — asks the server for its dashboard (starting it on the first
--- call) and opens the URL with vim.ui.open (Neovim 0.10+); with ! (or without
--- vim.ui.open, or when opening fails) the URL is only shown. opts.print: only show it;
--- opts.callback(result, opened).
function M.open(opts)
  opts = opts or {}
  lsp.execute_or_notify('openDashboard', {}, 'dashboard', function(result)
    local url = type(result) == 'table' and result.url or nil
    if type(url) ~= 'string' or url == '' then
      notify('saga: the server answered no dashboard URL', vim.log.levels.ERROR)
      return
    end
    local opened = false
    if not opts.print and vim.ui and vim.ui.open then
      local ok, cmd = pcall(vim.ui.open, url)
      opened = ok and cmd ~= nil
    end
    notify('saga: dashboard ' .. url .. (opened and ' (opened in the browser)' or ''), state.config.notify_level)
    if opts.callback then
      opts.callback(result, opened)
    end
  end)
end

return M

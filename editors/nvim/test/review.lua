-- Headless test of the plugin's review commands against the real server,
-- run by editors/nvim/review_test.go (TestPluginReview) on the shared
-- harness (internal/testkit/nvim/harness.lua).
--
-- Environment (set by the Go test):
--   SAGA_NVIM_PLUGIN, SAGA_LSP_SERVER, SAGA_LSP_LOG as for plugin.lua
--   SAGA_WS   a git copy of examples/workspace whose story add-logout-button
--             has a worktree copy holding notes.txt
--
-- As a user would: in notes.txt of the story's worktree, on line 2,
-- :SagaReviewComment twice with the same words; then :SagaAddressReview of
-- a story that does not exist (the server's refusal names its command).
-- Each part records the messages it saw; the Go test decides.

local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
local result = h.result
result.errors = vim.empty_dict()
local part = h.part

h.capture_notify(function() return '' end)

-- The messages since message number n.
local function since(n)
  local out = {}
  for i = n + 1, #result.notifications do
    table.insert(out, result.notifications[i].msg)
  end
  return out
end

h.main(function()
  local ws = h.env('SAGA_WS', true)
  vim.opt.rtp:append(h.env('SAGA_NVIM_PLUGIN', true))
  vim.cmd('runtime plugin/saga.lua')
  local saga = require('saga')
  saga.setup({ cmd = { h.env('SAGA_LSP_SERVER', true), 'serve' }, log_file = h.env('SAGA_LSP_LOG', true) })
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  h.step('setup')

  part('comment', function()
    local r = {}
    result.comment = r
    h.edit(ws .. '/.saga/worktrees/add-logout-button/notes.txt')
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    for i = 1, 2 do
      local n = #result.notifications
      vim.cmd('SagaReviewComment Why does the button log out twice?')
      if not h.wait(20000, function() return h.notified(n, 'saga: review task ') or h.notified(n, 'saga: review comment') end) then
        error('no answer to :SagaReviewComment ' .. i .. ': ' .. vim.inspect(since(n)))
      end
      r['messages' .. i] = since(n)
    end
  end)

  part('address', function()
    local n = #result.notifications
    vim.cmd('SagaAddressReview no-such-story')
    if not h.wait(20000, function() return h.notified(n, 'saga: address review no-such-story') end) then
      error('no answer to :SagaAddressReview: ' .. vim.inspect(since(n)))
    end
    result.address = since(n)
  end)

  part('land', function()
    local n = #result.notifications
    vim.cmd('SagaResolve add-logout-button')
    if not h.wait(20000, function() return h.notified(n, 'saga: resolve add-logout-button') end) then
      error('no answer to :SagaResolve: ' .. vim.inspect(since(n)))
    end
    result.resolve = since(n)
    n = #result.notifications
    vim.cmd('SagaLand --story no-such-story')
    if not h.wait(20000, function() return h.notified(n, 'saga: land no-such-story') end) then
      error('no answer to :SagaLand: ' .. vim.inspect(since(n)))
    end
    result.land = since(n)
  end)
end)

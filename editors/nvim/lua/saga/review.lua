-- saga.review: :SagaReview — the files a story's branch changed against its
-- base (the server's reviewStory), in the quickfix list.

local M = {}

local lsp = require('saga.lsp')
local message = require('saga.message')
local state = require('saga.state')
local ui = require('saga.ui')
local workspace = require('saga.workspace')

local notify = message.notify

-- The quickfix items of a reviewStory result: one per changed file, in the story's
-- worktree while it exists (the branch's version), else in the repository.
function M.items(result)
  local dir = (type(result.worktree) == 'string' and result.worktree ~= '') and result.worktree or result.repo
  local items = {}
  for _, f in ipairs(result.files or {}) do
    local text = f.status
    if f.oldPath and f.oldPath ~= vim.NIL and f.oldPath ~= '' then
      text = text .. ' (from ' .. f.oldPath .. ')'
    end
    table.insert(items, { filename = dir .. '/' .. f.path, lnum = 1, col = 1, text = text })
  end
  return items
end

--- :SagaReview [story] — the files the story's branch changed against its base, in the
--- quickfix list (opened), so the work can be read before its PR.
function M.review(story, opts)
  opts = opts or {}
  story = (story ~= nil and story ~= '') and story or workspace.story_of(0)
  if not story then
    notify('saga: which story? :SagaReview <story>', vim.log.levels.ERROR)
    return
  end
  lsp.execute_or_notify('reviewStory', { { story = story } }, 'review ' .. story, function(result)
    local items = M.items(result)
    local title = string.format('saga review %s: %s against %s', story, result.branch, result.base)
    vim.fn.setqflist({}, ' ', { title = title, items = items })
    if #items == 0 then
      notify('saga: ' .. result.branch .. ' changed nothing against ' .. result.base, state.config.notify_level)
    else
      ui.leave_float()
      vim.cmd('copen')
    end
    if opts.callback then
      opts.callback(result)
    end
  end)
end

return M

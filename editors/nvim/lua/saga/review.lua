-- saga.review: :SagaReview — the files a story's branch changed against its
-- base (the server's reviewStory), in the quickfix list; :SagaAddressReview —
-- a review round of the story (addressReview: `run <story> --review`); and
-- :SagaReviewComment — a comment on the current line of the review, a review
-- task of the story (addReviewComment).

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
    M.last = story
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

--- :SagaAddressReview [story] — a review round of the story on its branch and PR: its
--- PR's review becomes tasks and its worker addresses them (the lens "Address review (n)").
function M.address(story, opts)
  opts = opts or {}
  story = (story ~= nil and story ~= '') and story or workspace.story_of(0)
  if not story then
    notify('saga: which story? :SagaAddressReview <story>', vim.log.levels.ERROR)
    return
  end
  lsp.execute_or_notify('addressReview', { { story = story } }, 'address review ' .. story, function(result)
    local msg = 'saga: addressing the review of ' .. story
    if type(result) == 'table' and type(result.session) == 'string' then
      msg = msg .. ' in tmux session ' .. result.session
    end
    message.reply_done(opts, result, msg)
  end)
end

-- The story a buffer's review comment is for: its story worktree's
-- (.saga/worktrees/<story>/…), its story folder's, else the last :SagaReview's.
function M.story_of_review(buf)
  local name = vim.api.nvim_buf_get_name(buf or 0)
  return name:match('.*/%.saga/worktrees/([^/]+)/') or workspace.story_of(buf) or M.last
end

--- :SagaReviewComment {text} — the text, on the current line of the current file, a
--- review task of the story under review (the same comment twice is one task).
function M.comment(text, opts)
  opts = opts or {}
  local story = opts.story or M.story_of_review(0)
  if not story then
    notify('saga: which story? open its review first (:SagaReview <story>)', vim.log.levels.ERROR)
    return
  end
  if text == nil or vim.trim(text) == '' then
    notify('saga: :SagaReviewComment {text}: say what to change', vim.log.levels.ERROR)
    return
  end
  local path = vim.api.nvim_buf_get_name(0)
  local line = path ~= '' and vim.api.nvim_win_get_cursor(0)[1] or 0
  local arg = { story = story, path = path, line = line, body = text }
  lsp.execute_or_notify('addReviewComment', { arg }, 'review comment on ' .. story, function(result)
    local msg = 'saga: review task ' .. (type(result) == 'table' and tostring(result.task) or '?') .. ' of ' .. story
    if type(result) == 'table' and result.created == false then
      msg = msg .. ' (already there)'
    end
    message.reply_done(opts, result, msg)
  end)
end

return M

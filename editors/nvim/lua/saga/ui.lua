-- saga.ui: windows and buffers the plugin opens — leaving a float, editing a
-- file in a normal window, and the scratch buffers (:SagaPlan's) in a float,
-- split or tab.

local M = {}

local state = require('saga.state')
local workspace = require('saga.workspace')

-- Leaves a floating window (e.g. the :SagaPlan one) for the first normal window of the tab.
function M.leave_float()
  if vim.api.nvim_win_get_config(0).relative == '' then
    return
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_config(win).relative == '' then
      vim.api.nvim_set_current_win(win)
      return
    end
  end
end

-- Edits a file in the current (normal) window, unless it is already there.
function M.edit_file(path)
  path = workspace.normalize(path)
  M.leave_float()
  if workspace.normalize(vim.api.nvim_buf_get_name(0)) ~= path then
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
  end
end

--- Shows lines in a scratch buffer named `name` (float, split, vsplit or tab). Returns the buffer.
function M.show_scratch(name, lines, how)
  how = how or state.config.plan_window
  local buf
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name then -- exact: bufnr() would take a prefix
      buf = b
    end
  end
  if not buf then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'sagaplan'

  local win
  if how == 'float' then
    local width = 20
    for _, l in ipairs(lines) do
      width = math.max(width, vim.fn.strdisplaywidth(l))
    end
    width = math.min(width + 2, math.max(20, vim.o.columns - 4))
    local height = math.min(#lines, math.max(1, vim.o.lines - 6))
    win = vim.api.nvim_open_win(buf, true, {
      relative = 'editor',
      width = width,
      height = height,
      row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
      col = math.max(0, math.floor((vim.o.columns - width) / 2)),
      style = 'minimal',
      border = 'rounded',
    })
  else
    local open = ({ split = 'split', vsplit = 'vsplit', tab = 'tabnew' })[how] or 'split'
    vim.cmd(open)
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  end
  vim.api.nvim_buf_set_keymap(buf, 'n', 'q', '<cmd>close<CR>', { noremap = true, silent = true, nowait = true })
  return buf, win
end

return M

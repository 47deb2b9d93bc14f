-- saga.handlers: the server → client window messages the saga client answers
-- its own way — window/showDocument (leaves floats, opens a file :SagaNew has
-- just opened only once) and window/showMessage (no plan as a message while
-- :SagaPlan shows it).

local M = {}

local uv = vim.uv or vim.loop

local compat = require('saga.compat')
local state = require('saga.state')
local ui = require('saga.ui')
local workspace = require('saga.workspace')

-- window/showDocument: an external URI to vim.ui.open (0.10+), else the file
-- edited in a normal window (takeFocus false: only loaded), the cursor on the
-- selection's start.
function M.on_show_document(_, params, _)
  if type(params) ~= 'table' or type(params.uri) ~= 'string' then
    return { success = false }
  end
  if params.external then
    if vim.ui and vim.ui.open then
      vim.ui.open(params.uri)
      return { success = true }
    end
    return { success = false }
  end
  local fname = workspace.normalize(vim.uri_to_fname(params.uri))
  -- :SagaNew opened the file on the server's reply; the server then asks to
  -- show it too: once is enough (the user may have moved on already).
  local opened = state.opened[fname]
  state.opened[fname] = nil
  if opened and uv.now() - opened < 5000 then
    return { success = true }
  end
  if params.takeFocus == false then
    local buf = vim.fn.bufadd(fname)
    vim.fn.bufload(buf)
    vim.bo[buf].buflisted = true
    return { success = true }
  end
  local ok = pcall(ui.edit_file, fname)
  if not ok then
    return { success = false }
  end
  local sel = params.selection
  if type(sel) == 'table' and sel.start then
    local buf = vim.api.nvim_get_current_buf()
    pcall(vim.api.nvim_win_set_cursor, 0, { sel.start.line + 1, compat.byte_col(buf, sel.start) })
  end
  return { success = true }
end

-- window/showMessage: showPlan also sends the plan as a message (for clients
-- that do not show command results). While our own showPlan is in flight the
-- plan goes to its scratch buffer instead: a many-line message would be a
-- hit-enter prompt.
function M.on_show_message(err, result, ctx, config)
  if (state.pending[ctx.client_id .. ' showPlan'] or 0) > 0 and type(result) == 'table'
    and type(result.message) == 'string' and result.message:find('EXECUTION PLAN', 1, true) then
    return vim.NIL
  end
  return vim.lsp.handlers['window/showMessage'](err, result, ctx, config)
end

return M

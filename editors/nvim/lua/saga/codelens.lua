-- saga.codelens: code lenses — asking the saga client for a buffer's lenses
-- (per Neovim version), and the server → client messages after which they are
-- asked for again (workspace/codeLens/refresh, the end of a $/progress).

local M = {}

local compat = require('saga.compat')
local workspace = require('saga.workspace')

local config = require('saga.config')

-- The loaded buffers the client client_id is attached to (nil: the saga files).
local function saga_buffers(client_id)
  local out = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      if client_id then
        if vim.lsp.buf_is_attached(buf, client_id) then
          table.insert(out, buf)
        end
      elseif workspace.is_saga_file(vim.api.nvim_buf_get_name(buf)) then
        table.insert(out, buf)
      end
    end
  end
  return out
end

-- Asks the saga client for a buffer's lenses and shows them.
function M.refresh(buf)
  if not vim.api.nvim_buf_is_valid(buf) or not vim.api.nvim_buf_is_loaded(buf) then
    return
  end
  local codelens = vim.lsp.codelens
  if compat.has('0.12') and codelens.enable then
    -- 0.12+: enabled once, Neovim refreshes by itself.
    pcall(codelens.enable, true, { bufnr = buf })
    return
  end
  if compat.has('0.10') then
    pcall(codelens.refresh, { bufnr = buf })
    return
  end
  -- 0.7–0.9: refresh() only knows the current buffer; ask each saga client directly.
  for _, client in ipairs(compat.all_clients()) do
    if config.is_client(client) and vim.lsp.buf_is_attached(buf, client.id) then
      compat.client_request(client, 'textDocument/codeLens', { textDocument = { uri = vim.uri_from_bufnr(buf) } }, codelens.on_codelens, buf)
    end
  end
end

-- workspace/codeLens/refresh (server → client request).
function M.on_refresh(_, _, ctx)
  for _, buf in ipairs(saga_buffers(ctx.client_id)) do
    M.refresh(buf)
  end
  return vim.NIL
end

-- $/progress: Neovim's handler, then, when a work-done progress ends (the
-- workspace finished loading, a worker ended), fresh lenses: the ones asked
-- for while the server was still loading counted nothing yet.
function M.on_progress(err, result, ctx, config)
  local ret = vim.lsp.handlers['$/progress'](err, result, ctx, config)
  if type(result) == 'table' and type(result.value) == 'table' and result.value.kind == 'end' then
    for _, buf in ipairs(saga_buffers(ctx.client_id)) do
      M.refresh(buf)
    end
  end
  return ret
end

return M

-- saga.compat: what differs between Neovim versions (0.7 to 0.12) — client
-- methods, the list of clients, UTF-16 positions.

local M = {}

function M.has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

-- client:request / client.request (0.11 made the client's functions methods).
function M.client_request(client, method, params, handler, bufnr)
  if M.has('0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.client_stopped(client)
  if M.has('0.11') then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.all_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

-- Byte column of a UTF-16 position in a buffer line.
function M.byte_col(buf, pos)
  local line = vim.api.nvim_buf_get_lines(buf, pos.line, pos.line + 1, false)[1] or ''
  local ok, col
  if M.has('0.11') then
    ok, col = pcall(vim.str_byteindex, line, 'utf-16', pos.character, false)
  else
    ok, col = pcall(vim.str_byteindex, line, pos.character, true)
  end
  if not ok then
    return #line
  end
  return col
end

return M

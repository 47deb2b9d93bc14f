-- saga.nvim: defines the :Saga* commands so they exist before setup() runs.
-- Attaching saga-lsp to buffers under .saga/ starts with require('saga').setup().
if vim.g.loaded_saga then
  return
end
vim.g.loaded_saga = true

if vim.fn.has('nvim-0.7') == 0 then
  vim.api.nvim_err_writeln('saga: Neovim 0.7 or later is needed')
  return
end

require('saga')._define_commands()
require('saga').helptags()

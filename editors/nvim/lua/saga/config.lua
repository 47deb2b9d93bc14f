-- saga.config: the options of setup() — their defaults (see :help saga-setup)
-- and how setup() merges the user's with them. The current options live in
-- state.config (require('saga').config).

local M = {}

-- The name saga-lsp clients are started under by setup(), and the name of
-- the configuration lsp/saga_lsp.lua gives vim.lsp.config (0.11+), whose
-- clients carry it instead. The plugin's commands find both.
M.client_name = 'saga-lsp'
M.native_name = 'saga_lsp'

--- Whether a client is saga-lsp (started by setup() or by vim.lsp.enable('saga_lsp')).
function M.is_client(client)
  return client.name == M.client_name or client.name == M.native_name
end

M.defaults = {
  -- The server command; `--log-file <log_file>` is appended when log_file is set.
  cmd = { 'saga-lsp' },
  -- Start saga-lsp for `.saga/` JSON buffers. false: the commands, handlers and
  -- options only, for a client started otherwise (vim.lsp.enable('saga_lsp') on 0.11+).
  autostart = true,
  log_file = nil,
  -- Prefix of the server's workspace/executeCommand ids (initializationOptions.commandPrefix).
  command_prefix = 'saga.',
  -- :SagaRun starts workers with the simulated agent (no tokens spent); :SagaRun! always does.
  dry_run = false,
  -- vim.notify for saga/workerProgress and saga/taskStatus: false turns them off (the
  -- warnings when a run needs you stay: a story that ends failed, blocked, timed out or held).
  notify = true,
  notify_level = vim.log.levels.INFO,
  -- Refresh code lenses on BufEnter, BufWritePost and InsertLeave in saga buffers.
  codelens = true,
  -- A buffer-local mapping that runs the code lens on the cursor line (e.g. '<leader>sr'); nil: none.
  codelens_keymap = nil,
  -- Where :SagaPlan shows the plan: 'float', 'split', 'vsplit' or 'tab'.
  plan_window = 'float',
  -- Passed through to the client.
  capabilities = nil,
  on_attach = nil,
  -- Called with the params of every saga/workerProgress, saga/taskStatus and saga/epicProgress notification.
  on_worker_progress = nil,
  on_task_status = nil,
  on_epic_progress = nil,
}

-- The options of setup(opts): opts over the defaults; cmd, a list, is
-- replaced rather than merged, and a string is a one-word command.
function M.merge(opts)
  local config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  if type(opts) == 'table' and opts.cmd then
    config.cmd = opts.cmd -- a list: replaced, not merged
  end
  if type(config.cmd) == 'string' then
    config.cmd = { config.cmd }
  end
  return config
end

return M

-- saga.state: the plugin's mutable state, in one table shared by its modules.
-- Its tables are never replaced (config aside: setup() replaces it), so what
-- require('saga') hands out (workers(), epic_runs()) stays current.

local config = require('saga.config')

return {
  config = vim.deepcopy(config.defaults), -- the options (setup() replaces them)
  setup_done = false,
  workers = {}, -- story -> the latest saga/workerProgress params (+ client_id)
  epics = {}, -- epic -> the latest saga/epicProgress params (+ client_id)
  notified = {}, -- story -> key of the last progress notification shown
  needs_you = {}, -- keys of the run ends already announced (never twice)
  last_buf = nil, -- the last saga buffer entered (for :checkhealth, which runs in a new tab)
  pending = {}, -- '<client id> <command>' -> executeCommand requests in flight
  opened = {}, -- path -> when :SagaNew opened it (uv.now())
}

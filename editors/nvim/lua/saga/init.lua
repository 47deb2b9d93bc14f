-- saga.nvim: Neovim client for saga-lsp (the language server of `.saga/`
-- workspaces). See :help saga and editors/nvim/README.md.
--
-- Works on Neovim 0.7 and later: `vim.lsp.start` where it exists (0.8+),
-- `vim.lsp.start_client` + `vim.lsp.buf_attach_client` on 0.7; the code lens,
-- health and client APIs are picked by version in the same way.
--
-- This module is the plugin's public API (:help saga-api) and setup(); the
-- work is done in the modules beside it:
--
--   config     the options' defaults, merging setup()'s
--   state      the mutable state, in one table
--   compat     what differs between Neovim versions
--   message    vim.notify, error text, a command's closing message
--   workspace  roots, stories and epics of a `.saga/` workspace
--   progress   live runs: saga/* notifications, warnings, statusline
--   codelens   lens refreshes
--   ui         floats, scratch buffers, opening files
--   handlers   window/showDocument and window/showMessage
--   lsp        the clients: start, attach, executeCommand
--   actions    :SagaRun, :SagaStop, :SagaLand, :SagaResolve, :SagaPlan, :SagaOutput, lens commands
--   new        :SagaNew
--   review     :SagaReview, :SagaAddressReview, :SagaReviewComment
--   dashboard  :SagaDashboard
--   server     :SagaRestart, :SagaLog, :SagaInfo
--   commands   the user commands: parsing, completion, definition

local actions = require('saga.actions')
local codelens = require('saga.codelens')
local commands = require('saga.commands')
local config = require('saga.config')
local dashboard = require('saga.dashboard')
local lsp = require('saga.lsp')
local new = require('saga.new')
local progress = require('saga.progress')
local review = require('saga.review')
local server = require('saga.server')
local state = require('saga.state')
local ui = require('saga.ui')
local workspace = require('saga.workspace')

local M = {}

-- Workspace: roots, stories, epics.
M.is_saga_file = workspace.is_saga_file
M.root_of = workspace.root_of
M.root = workspace.root
M.story_of = workspace.story_of
M.epic_of = workspace.epic_of
M.stories = workspace.stories
M.epics = workspace.epics

-- Live runs and the statusline.
M.workers = progress.workers
M.running = progress.running
M.epic_runs = progress.epic_runs
M.running_epics = progress.running_epics
M.statusline = progress.statusline
M._on_worker_progress = progress.on_worker_progress
M._on_epic_progress = progress.on_epic_progress
M._on_task_status = progress.on_task_status

-- Clients.
M.refresh_codelens = codelens.refresh
M.client_for_root = lsp.client_for_root
M.client_for_buf = lsp.client_for_buf
M.attach = lsp.attach
M.execute = lsp.execute
M.session_dir = lsp.session_dir

-- What the commands do.
M.run = actions.run
M.stop = actions.stop
M.plan = actions.plan
M.output = actions.output
M._target = actions.target
M._plan_lines = actions.plan_lines
M.show_scratch = ui.show_scratch
M.new = new.new
M._new_argument = new.argument
M.review = review.review
M.address_review = review.address
M.review_comment = review.comment
M.dashboard = dashboard.open
M._review_items = review.items

-- The server, from the user's side.
M.restart = server.restart
M.log_path = server.log_path
M.info_lines = server.info_lines

-- The user commands.
M._split_args = commands.split_args
M._target_args = commands.target_args
M._complete_run = commands.complete_run
M._complete_new = commands.complete_new
M._define_commands = commands.define

--- setup(opts): see :help saga-setup.
function M.setup(opts)
  state.config = config.merge(opts)
  state.setup_done = true
  commands.define()
  M.helptags()

  local group = vim.api.nvim_create_augroup('saga', { clear = true })
  vim.api.nvim_create_autocmd('BufEnter', {
    group = group,
    pattern = { '*.json', '*.jsonc' },
    callback = function(args)
      if lsp.client_for_buf(args.buf) then
        state.last_buf = args.buf
      end
    end,
  })
  if not state.config.autostart then
    -- Clients come from elsewhere (vim.lsp.enable('saga_lsp')): the
    -- commands and options only.
    return
  end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    pattern = { '*.json', '*.jsonc' },
    callback = function(args)
      lsp.attach(args.buf)
    end,
  })
  -- Buffers loaded before setup (e.g. a lazily loaded plugin).
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      lsp.attach(buf)
    end
  end
end

--- Generates the plugin's doc/tags when it is missing or older than
--- doc/saga.txt (the tags are not in the repository, so that they are never
--- stale): :help saga then works however the plugin was installed. Quiet
--- when the folder is read-only.
function M.helptags()
  -- This plugin's doc/ (lua/saga/init.lua → ../../doc), not another saga.txt on 'runtimepath'.
  local doc = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h') .. '/doc'
  local uv = vim.uv or vim.loop
  local src, tags = uv.fs_stat(doc .. '/saga.txt'), uv.fs_stat(doc .. '/tags')
  if not src or (tags and tags.mtime.sec >= src.mtime.sec) then
    return
  end
  pcall(vim.cmd, 'silent! helptags ' .. vim.fn.fnameescape(doc))
end

--- Whether setup() has run.
function M.is_setup()
  return state.setup_done
end

--- The last buffer saga-lsp was attached to (for :checkhealth).
function M.last_buffer()
  local buf = state.last_buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  return nil
end

-- M.config is the current options (state.config, which setup() replaces):
-- read, changed or assigned here, it is what the modules use.
return setmetatable(M, {
  __index = function(_, key)
    if key == 'config' then
      return state.config
    end
  end,
  __newindex = function(t, key, value)
    if key == 'config' then
      state.config = value
    else
      rawset(t, key, value)
    end
  end,
})

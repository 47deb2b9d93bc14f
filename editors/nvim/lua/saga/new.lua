-- saga.new: :SagaNew — the createStory / createTask / createEpic argument
-- parsed from `story|task|epic <args>`, the server command, and the new file
-- opened.

local M = {}

local uv = vim.uv or vim.loop

local lsp = require('saga.lsp')
local message = require('saga.message')
local state = require('saga.state')
local ui = require('saga.ui')
local workspace = require('saga.workspace')

local notify = message.notify

-- "--blocked-by" -> "blockedBy"
local function camel(flag)
  return (flag:gsub('%-(%w)', function(c) return c:upper() end))
end

-- Parses "pos1 pos2 --flag value --flag=value" into positionals and flags.
local function parse_flags(args)
  local pos, flags = {}, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local name, value = a:match('^%-%-([%w-]+)=(.*)$')
    if name then
      flags[camel(name)] = value
    elseif a:match('^%-%-[%w-]+$') then
      flags[camel(a:sub(3))] = args[i + 1] or ''
      i = i + 1
    else
      table.insert(pos, a)
    end
    i = i + 1
  end
  return pos, flags
end

local function list_flag(v)
  if v == nil then
    return nil
  end
  local out = {}
  for item in tostring(v):gmatch('[^,%s]+') do
    table.insert(out, item)
  end
  return out
end

local USAGE = {
  story = ':SagaNew story <name> [--title T] [--description D] [--epic E] [--blocked-by a,b]',
  task = ':SagaNew task [<story>] <task-id> [--subject S] [--description D] [--blocked-by a,b] [--priority P] [--active-form A] [--guidance G] [--done-when W]',
  epic = ':SagaNew epic <id> [--title T] [--description D]',
}

-- The flags of each kind (for completion).
M.flags = {
  story = { '--title', '--description', '--epic', '--blocked-by' },
  task = { '--subject', '--description', '--blocked-by', '--priority', '--active-form', '--guidance', '--done-when' },
  epic = { '--title', '--description' },
}

-- The createStory/createTask/createEpic argument of `:SagaNew <kind> …`, or nil and an error.
function M.argument(kind, args, buf)
  local pos, flags = parse_flags(args)
  local arg = {}
  for k, v in pairs(flags) do
    arg[k] = v
  end
  if arg.blockedBy then
    arg.blockedBy = list_flag(arg.blockedBy)
  end
  if kind == 'task' then
    if #pos == 1 then
      arg.story, arg.id = workspace.story_of(buf), pos[1]
    else
      arg.story, arg.id = pos[1], pos[2]
    end
    if not arg.story or not arg.id or #pos > 2 then
      return nil, USAGE.task
    end
  elseif kind == 'story' then
    arg.name = pos[1]
    if not arg.name or #pos > 1 then
      return nil, USAGE.story
    end
  elseif kind == 'epic' then
    arg.id = pos[1]
    if not arg.id or #pos > 1 then
      return nil, USAGE.epic
    end
  else
    return nil, 'usage: :SagaNew story|task|epic …'
  end
  return arg
end

--- :SagaNew story|task|epic <args> — creates the file and opens it.
function M.new(kind, args, opts)
  opts = opts or {}
  local arg, usage = M.argument(kind, args or {}, 0)
  if not arg then
    notify('saga: ' .. usage, vim.log.levels.ERROR)
    return
  end
  local command = ({ story = 'createStory', task = 'createTask', epic = 'createEpic' })[kind]
  local root = workspace.root()
  lsp.execute_or_notify(command, { arg }, 'new ' .. kind, function(result, client)
    -- {created = [root-relative paths], updated = […], uri = the new file}
    local created = type(result) == 'table' and type(result.created) == 'table' and result.created or {}
    local uri = type(result) == 'table' and type(result.uri) == 'string' and result.uri ~= '' and result.uri or nil
    if not uri and created[1] then
      uri = vim.uri_from_fname((client.config.root_dir or root) .. '/' .. created[1])
    end
    if not uri then
      notify('saga: new ' .. kind .. ': saga-lsp reported no file created (' .. vim.inspect(result) .. ')', vim.log.levels.WARN)
      return
    end
    -- The server also asks to show it (window/showDocument): opened once either way.
    local path = workspace.normalize(vim.uri_to_fname(uri))
    if workspace.normalize(vim.api.nvim_buf_get_name(0)) ~= path then
      state.opened[path] = uv.now()
      ui.edit_file(path)
    end
    local what = #created > 0 and table.concat(created, ', ') or vim.uri_to_fname(uri)
    if type(result.updated) == 'table' and #result.updated > 0 then
      what = what .. ' (updated ' .. table.concat(result.updated, ', ') .. ')'
    end
    message.reply_done(opts, result, 'saga: created ' .. what)
  end)
end

return M

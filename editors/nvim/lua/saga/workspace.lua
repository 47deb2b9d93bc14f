-- saga.workspace: where things are in a `.saga/` workspace — path normalizing,
-- workspace roots, and the story / epic a buffer belongs to or a root holds.
-- Pure functions of paths, buffers and the file system; no state.

local M = {}

local uv = vim.uv or vim.loop

-- An absolute path without trailing slashes; nil for nil or ''.
function M.normalize(path)
  if path == nil or path == '' then
    return nil
  end
  path = vim.fn.fnamemodify(path, ':p')
  if #path > 1 then
    path = path:gsub('/+$', '')
  end
  return path
end

local function is_dir(path)
  local st = uv.fs_stat(path)
  return st ~= nil and st.type == 'directory'
end

--- Whether `path` is a JSON file inside a `.saga/` folder.
function M.is_saga_file(path)
  path = M.normalize(path)
  return path ~= nil and path:find('/%.saga/') ~= nil and (path:match('%.json$') or path:match('%.jsonc$')) ~= nil
end

--- The workspace root of a path: the folder holding its (outermost) `.saga/`
--- segment, else the nearest folder at or above it that contains `.saga/`.
--- A story worktree (`.saga/worktrees/<story>/.saga/…`) belongs to the
--- repository's root, whose server follows the worktree's live status.
function M.root_of(path)
  path = M.normalize(path)
  if path == nil then
    return nil
  end
  local root = path:match('^(.-)/%.saga/') or path:match('^(.-)/%.saga$')
  if root ~= nil then
    return root == '' and '/' or root
  end
  local dir = path
  if not is_dir(dir) then
    dir = vim.fn.fnamemodify(dir, ':h')
  end
  while dir and dir ~= '' do
    if is_dir(dir .. '/.saga') then
      return dir
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return nil
end

--- The workspace root for commands: the current buffer's, else the working directory's.
function M.root(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  return (name ~= '' and vim.bo[buf].buftype == '' and M.root_of(name)) or M.root_of(uv.cwd())
end

--- The story a buffer belongs to (`.saga/stories/<story>/…`), or nil.
function M.story_of(buf)
  local name = vim.api.nvim_buf_get_name(buf or 0)
  return name:match('.*/%.saga/stories/([^/]+)/')
end

--- The epic a buffer is (`.saga/epics/<epic>/epic.json` or `.saga/epics/<epic>.json`), or nil.
function M.epic_of(buf)
  local name = vim.api.nvim_buf_get_name(buf or 0)
  return name:match('.*/%.saga/epics/([^/]+)/epic%.json$') or name:match('.*/%.saga/epics/([^/]+)%.json$')
end

local function scandir(dir)
  local out = {}
  local handle = uv.fs_scandir(dir)
  if not handle then
    return out
  end
  while true do
    local name, typ = uv.fs_scandir_next(handle)
    if not name then
      break
    end
    table.insert(out, { name = name, type = typ })
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

--- Story names of a workspace (the folders of `.saga/stories/`).
function M.stories(root)
  root = root or M.root()
  local out = {}
  if not root then
    return out
  end
  for _, e in ipairs(scandir(root .. '/.saga/stories')) do
    if e.type == 'directory' then
      table.insert(out, e.name)
    end
  end
  return out
end

--- Epic ids of a workspace (`.saga/epics/<id>/` and `.saga/epics/<id>.json`).
function M.epics(root)
  root = root or M.root()
  local out, seen = {}, {}
  if not root then
    return out
  end
  for _, e in ipairs(scandir(root .. '/.saga/epics')) do
    local id = e.type == 'directory' and e.name or e.name:match('^(.+)%.json$')
    if id and not seen[id] then
      seen[id] = true
      table.insert(out, id)
    end
  end
  return out
end

return M

-- Unit checks of the saga plugin's pure parts, no server, run by
-- editors/nvim/nvim_test.go (TestPluginUnit) on the shared harness
-- (internal/testkit/nvim/harness.lua).
--
-- Environment: SAGA_NVIM_PLUGIN (editors/nvim). The result has
-- {"checks": [{name, ok, got, want}], "error"?}; nvim_test.go fails on every
-- check that is not ok.

local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
local result = h.result
result.checks = {}

local function check(name, got, want)
  table.insert(result.checks, {
    name = name,
    ok = vim.deep_equal(got, want),
    got = vim.inspect(got),
    want = vim.inspect(want),
  })
end

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level })
end

local function named_buffer(name)
  local b = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(b, name)
  return b
end

h.main(function()
  vim.opt.rtp:append(h.env('SAGA_NVIM_PLUGIN', true))
  local saga = require('saga')

  -- Command-line splitting (what :SagaNew gets).
  check('split plain', saga._split_args('task s1  t1'), { 'task', 's1', 't1' })
  check('split quotes', saga._split_args([[a "b c" 'd "e"' f\ g --x=1 ""]]), { 'a', 'b c', 'd "e"', 'f g', '--x=1', '' })

  -- :SagaNew arguments.
  check('new task', saga._new_argument('task', { 'user-auth--api', 't1', '--subject', 'Do it', '--blocked-by', 'a,b', '--done-when=tests pass', '--active-form', 'Doing it' }, 0), {
    story = 'user-auth--api', id = 't1', subject = 'Do it', blockedBy = { 'a', 'b' }, doneWhen = 'tests pass', activeForm = 'Doing it',
  })
  local tb = named_buffer('/w/.saga/stories/user-auth--api/login.json')
  check('new task in the buffer story', saga._new_argument('task', { 't2', '--subject', 'S' }, tb), { story = 'user-auth--api', id = 't2', subject = 'S' })
  local _, usage = saga._new_argument('task', { 't2' }, 0)
  check('new task without a story', usage ~= nil and usage:match('^:SagaNew task') ~= nil, true)
  check('new story', saga._new_argument('story', { 'audit', '--title', 'Audit log', '--epic', 'user-auth' }, 0), { name = 'audit', title = 'Audit log', epic = 'user-auth' })
  check('new epic', saga._new_argument('epic', { 'billing', '--title', 'Billing' }, 0), { id = 'billing', title = 'Billing' })
  local none, u2 = saga._new_argument('bogus', {}, 0)
  check('new bogus kind', { none, u2 ~= nil }, { nil, true })

  -- Roots, stories, epics.
  check('root of a task', saga.root_of('/w/.saga/stories/s1/t.json'), '/w')
  check('root of a worktree task', saga.root_of('/w/.saga/worktrees/s1/.saga/stories/s1/t.json'), '/w')
  check('story of a task buffer', saga.story_of(tb), 'user-auth--api')
  check('story of a worktree buffer', saga.story_of(named_buffer('/w/.saga/worktrees/s9/.saga/stories/s9/x.json')), 's9')
  check('epic (folder)', saga.epic_of(named_buffer('/w/.saga/epics/e1/epic.json')), 'e1')
  check('epic (file)', saga.epic_of(named_buffer('/w/.saga/epics/e2.json')), 'e2')
  check('saga file', { saga.is_saga_file('/w/.saga/stories/s/t.json'), saga.is_saga_file('/w/.saga/stories/s/journal.md'), saga.is_saga_file('/w/src/x.json') }, { true, false, false })

  -- Completion from a workspace on disk (stories and epics listed from .saga/).
  local ws = vim.fn.tempname()
  for _, d in ipairs({ '/.saga/stories/alpha', '/.saga/stories/beta--one', '/.saga/epics/beta' }) do
    vim.fn.mkdir(ws .. d, 'p')
  end
  vim.fn.writefile({ '{}' }, ws .. '/.saga/epics/gamma.json')
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  vim.cmd('enew')
  check('root from cwd', saga.root(), vim.fn.resolve(ws))
  check('stories', saga.stories(), { 'alpha', 'beta--one' })
  check('epics', saga.epics(), { 'beta', 'gamma' })
  check('complete kind', saga._complete_new('', 'SagaNew '), { 'story', 'task', 'epic' })
  check('complete kind prefix', saga._complete_new('t', 'SagaNew t'), { 'task' })
  check('complete task story', saga._complete_new('b', 'SagaNew task b'), { 'beta--one' })
  check('complete flags', saga._complete_new('--d', 'SagaNew task alpha t1 --d'), { '--description', '--done-when' })
  check('complete epic flag', saga._complete_new('', 'SagaNew story x --epic '), { 'beta', 'gamma' })

  -- :SagaRun/:SagaStop/:SagaPlan arguments: a story or an epic; a name that is both must say which.
  check('target args', { saga._target_args('--epic shop --max-parallel 2 --after=merged', true) },
    { 'shop', { dry_run = true, epic = true, max_parallel = '2', after = 'merged' } })
  check('target args plain', { saga._target_args('alpha') }, { 'alpha', {} })
  check('target args bad flag', select(3, saga._target_args('x --bogus 1')), 'unknown flag --bogus (--story, --epic, --max-parallel, --max-cost, --after)')
  check('target args both kinds', select(3, saga._target_args('--story --epic x')), '--story and --epic exclude each other: pass the one the name is')
  check('target story', { saga._target('alpha', {}, 'SagaRun') }, { 'alpha', 'story' })
  check('target epic', { saga._target('gamma', {}, 'SagaRun') }, { 'gamma', 'epic' })
  vim.fn.mkdir(ws .. '/.saga/stories/beta', 'p')
  check('target both', select(3, saga._target('beta', {}, 'SagaRun')), 'beta is both a story and an epic: :SagaRun --story beta or :SagaRun --epic beta')
  check('target both, said', { saga._target('beta', { epic = true }, 'SagaRun') }, { 'beta', 'epic' })
  check('complete run', saga._complete_run('g', 'SagaRun g'), { 'gamma' })
  check('complete run flags', saga._complete_run('--m', 'SagaRun --m'), { '--max-parallel', '--max-cost' })
  check('complete after', saga._complete_run('', 'SagaRun shop --after '), { 'ready', 'merged' })

  -- :SagaReview's quickfix items: in the worktree while it exists, else the repository.
  local review = { story = 's', branch = 'story/s', base = 'main', repo = '/r', worktree = '/r/.saga/worktrees/s',
    files = { { path = 'a.go', status = 'modified' }, { path = 'b.go', status = 'renamed', oldPath = 'c.go' } } }
  check('review items', saga._review_items(review), {
    { filename = '/r/.saga/worktrees/s/a.go', lnum = 1, col = 1, text = 'modified' },
    { filename = '/r/.saga/worktrees/s/b.go', lnum = 1, col = 1, text = 'renamed (from c.go)' },
  })
  review.worktree = ''
  check('review items without worktree', saga._review_items(review)[1].filename, '/r/a.go')

  -- Plan rendering: the result's text (trailing newline dropped), else what came.
  check('plan string', saga._plan_lines('s', 'EXECUTION PLAN\nWAVE 1'), { 'EXECUTION PLAN', 'WAVE 1' })
  check('plan text', saga._plan_lines('s', { name = 's', text = 'A\nB\n', plan = { waves = {} } }), { 'A', 'B' })
  check('plan without text', saga._plan_lines('s', vim.NIL)[1], 'saga-lsp returned no plan text for s:')

  -- Scratch buffers are found by their exact name (saga://plan/user-auth is not saga://plan/user).
  local b1 = saga.show_scratch('saga://plan/user-auth', { 'one' }, 'split')
  local b2 = saga.show_scratch('saga://plan/user', { 'two' }, 'split')
  local b3 = saga.show_scratch('saga://plan/user-auth', { 'three' }, 'split')
  check('scratch by exact name', { b1 ~= b2, b1 == b3, vim.api.nvim_buf_get_lines(b1, 0, -1, false), vim.api.nvim_buf_get_lines(b2, 0, -1, false) },
    { true, true, { 'three' }, { 'two' } })

  -- Worker progress: statusline and notifications. (No .saga buffers left for
  -- setup() to attach a server to.)
  vim.cmd('silent! %bwipeout!')
  saga.setup({ cmd = { 'saga-lsp-not-installed' } })
  check('statusline idle', saga.statusline(), '')
  notes = {}
  saga._on_worker_progress({ story = 's1', session = 'x', state = 'starting', step = 'lock', done = 0, total = 0, message = 'locked', outputFile = '/tmp/o.log' }, { client_id = 1 })
  check('statusline starting', saga.statusline(), 'SAGA s1 starting')
  saga._on_worker_progress({ story = 's1', state = 'running', step = 'loop', cycle = 1, done = 2, total = 5, message = vim.NIL }, { client_id = 1 })
  check('statusline running', saga.statusline(), 'SAGA s1 2/5 running')
  saga._on_worker_progress({ story = 's1', state = 'running', step = 'loop', cycle = 1, done = 2, total = 5, message = 'more output' }, { client_id = 1 })
  saga._on_worker_progress({ story = 's2', state = 'running', done = 0, total = 3 }, { client_id = 1 })
  check('statusline two', saga.statusline(), 'SAGA s1 2/5 running, s2 0/3 running')
  check('running', saga.running(), { 's1', 's2' })
  saga._on_worker_progress({ story = 's1', state = 'completed', done = 5, total = 5, message = 'all done' }, { client_id = 1 })
  check('statusline after s1', saga.statusline(), 'SAGA s2 0/3 running')
  check('worker kept', saga.workers().s1.state, 'completed')
  local msgs = {}
  for _, n in ipairs(notes) do
    table.insert(msgs, n.msg)
  end
  check('progress notifications', msgs, {
    'saga: s1 starting [lock] — locked',
    'saga: s1 2/5 running [loop]',
    'saga: s2 0/3 running',
    'saga: s1 5/5 completed — all done',
  })
  -- A run that needs you: one warning per end, never repeated.
  notes = {}
  saga._on_worker_progress({ story = 's2', session = 'saga-story-s2-1', state = 'failed', done = 1, total = 3, message = 'worker failed: 1/3 tasks, 1 run' }, { client_id = 1 })
  saga._on_worker_progress({ story = 's2', session = 'saga-story-s2-1', state = 'failed', done = 1, total = 3, message = 'worker failed: 1/3 tasks, 1 run' }, { client_id = 1 })
  check('failed warns once', notes, { { msg = 'saga: s2 failed — :SagaOutput s2 shows why (worker failed: 1/3 tasks, 1 run)', level = vim.log.levels.WARN } })
  check('statusline none', saga.statusline(), '')
  notes = {}
  saga._on_worker_progress({ story = 's2', session = 'saga-story-s2-2', state = 'blocked', done = 1, total = 3 }, { client_id = 1 })
  check('blocked warns (another end)', #notes == 1 and notes[1].level == vim.log.levels.WARN and notes[1].msg:match('^saga: s2 is blocked') ~= nil, true)

  -- An epic run: the statusline shows it (its workers' own progress stays out of
  -- messages and the statusline); a held story warns once; the end is one message.
  notes = {}
  local function epic(st, done, running, stories)
    saga._on_epic_progress({ epic = 'shop', session = 'saga-epic-shop-1', state = st, done = done, total = 3, running = running,
      held = {}, failed = {}, cost = 0, stories = stories }, { client_id = 1 })
  end
  epic('running', 0, { 'shop--a', 'shop--c' }, { { id = 'shop--a', state = 'running', heldBy = {} }, { id = 'shop--c', state = 'running', heldBy = {} }, { id = 'shop--b', state = 'waiting', heldBy = {} } })
  saga._on_worker_progress({ story = 'shop--a', session = 'saga-story-shop--a-1', state = 'running', step = 'loop', done = 1, total = 2 }, { client_id = 1 })
  saga._on_task_status({ story = 'shop--a', task = 'a1', to = 'completed' }, { client_id = 1 })
  check('statusline epic', saga.statusline(), 'SAGA shop 0/3 ▶2')
  check('running epics', saga.running_epics(), { 'shop' })
  check('no chatter from an epic worker', #notes, 0)
  local held = { { id = 'shop--a', state = 'failed', heldBy = {} }, { id = 'shop--c', state = 'running', heldBy = {} }, { id = 'shop--b', state = 'held', heldBy = { 'shop--a' } } }
  epic('running', 0, { 'shop--c' }, held)
  epic('running', 0, { 'shop--c' }, held)
  check('held warns once', notes, { { msg = 'saga: shop--b is held by shop--a (failed) — it will not run in this epic run (:SagaPlan shop)', level = vim.log.levels.WARN } })
  check('statusline epic 2', saga.statusline(), 'SAGA shop 0/3 ▶1')
  notes = {}
  epic('failed', 1, {}, held)
  check('epic end', notes, { { msg = 'saga: epic shop failed: 1/3 stories', level = vim.log.levels.INFO } })
  check('statusline after the epic', saga.statusline(), 'SAGA shop--a 1/2 running')
  saga._on_worker_progress({ story = 'shop--a', session = 'saga-story-shop--a-1', state = 'stopped', done = 1, total = 2 }, { client_id = 1 })

  notes = {}
  saga._on_task_status({ story = 's1', task = 't1', subject = 'Do it', from = 'pending', to = 'in_progress', source = 'hook' }, { client_id = 1 })
  check('task status', notes[1] and notes[1].msg, 'saga: s1 #t1 Do it: pending → in_progress (hook)')

  -- notify = false: no messages, the statusline still follows.
  saga.setup({ cmd = { 'saga-lsp-not-installed' }, notify = false })
  notes = {}
  saga._on_worker_progress({ story = 's3', state = 'running', done = 1, total = 2 }, { client_id = 1 })
  saga._on_task_status({ story = 's3', task = 't', to = 'completed' }, { client_id = 1 })
  check('notify off', #notes, 0)
  check('statusline with notify off', saga.statusline(), 'SAGA s3 1/2 running')

  -- setup() replaces cmd (a list) instead of merging it with the default.
  saga.setup({ cmd = { '/x/saga-lsp', 'serve' } })
  check('cmd replaced', saga.config.cmd, { '/x/saga-lsp', 'serve' })
  check('defaults kept', { saga.config.command_prefix, saga.config.plan_window }, { 'saga.', 'float' })
  -- The help file: :helptags accepts it (no duplicate tags) and every command has a tag.
  local doc = vim.fn.tempname()
  vim.fn.mkdir(doc, 'p')
  vim.fn.writefile(vim.fn.readfile(os.getenv('SAGA_NVIM_PLUGIN') .. '/doc/saga.txt'), doc .. '/saga.txt')
  local ok_tags, tags_err = pcall(vim.cmd, 'helptags ' .. vim.fn.fnameescape(doc))
  check('helptags', ok_tags and true or tostring(tags_err), true)
  local tags = {}
  for _, l in ipairs(vim.fn.filereadable(doc .. '/tags') == 1 and vim.fn.readfile(doc .. '/tags') or {}) do
    tags[l:match('^[^\t]+')] = true
  end
  check('help tags', { tags['saga.txt'], tags[':SagaRun'], tags[':SagaStop'], tags[':SagaPlan'], tags[':SagaNew'], tags[':SagaOutput'], tags[':SagaReview'], tags['saga-setup'], tags['saga.statusline()'], tags[':SagaRestart'], tags[':SagaLog'], tags[':SagaInfo'], tags['saga-native'] }, { true, true, true, true, true, true, true, true, true, true, true, true, true })

  check('commands', { vim.fn.exists(':SagaRun'), vim.fn.exists(':SagaStop'), vim.fn.exists(':SagaPlan'), vim.fn.exists(':SagaNew'), vim.fn.exists(':SagaOutput'), vim.fn.exists(':SagaReview') }, { 2, 2, 2, 2, 2, 2 })
end)

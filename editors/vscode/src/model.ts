// The workspace as the SAGA view shows it: epics, stories and tasks with their
// statuses and the state of each story's worker.
//
// The base comes from `saga-lsp status --format json --tasks` (statuses read
// from each story's worktree copy, where a running worker writes), `status
// <epic> --epic --format json` for each epic (its run: each child's run state,
// done/total) plus the epic files for their titles; the server's
// saga/taskStatus, saga/workerProgress and saga/epicProgress notifications are
// applied on top as they arrive, and every change of a file under .saga/
// triggers a fresh `status` (debounced).

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Serial } from './serial';

export interface TaskInfo {
  id: string;
  subject: string;
  status: string;
  blockedBy: string[];
}

export interface WorkerInfo {
  running: boolean;
  pid: number;
  session: string;
  outputFile: string;
  state: string;
  cycle: number;
  exitCode: number | null;
  started: string;
}

export interface StoryInfo {
  id: string;
  title: string;
  status: string;
  done: number;
  total: number;
  epic: string;
  pr: string;
  branch: string;
  worktree: string;
  worker: WorkerInfo;
  tasks: TaskInfo[];
}

export interface EpicInfo {
  id: string;
  title: string;
  status: string;
  file: string;
}

/** saga/workerProgress (docs/protocol-extensions.md#custom-notifications). */
export interface WorkerProgress {
  story: string;
  session?: string;
  state: string; // starting | running | completed | failed | timeout | blocked | stopped
  step?: string;
  cycle?: number;
  done?: number;
  total?: number;
  message?: string;
  outputFile?: string;
}

/** saga/taskStatus. */
export interface TaskStatus {
  story: string;
  task: string;
  subject?: string;
  from?: string;
  to: string;
  source?: string;
}

/** A child story's state in an epic run (`status <epic> --format json`). */
export interface EpicStoryRun {
  id: string;
  state: string; // waiting | ready | running | completed | failed | blocked | timeout | stopped | held
  blockedBy: string[];
  heldBy: string[];
  conflicts: string[];
  branch: string;
  base: string;
  pr: string;
  cost: number;
  session: string;
  done: number;
  total: number;
  /** Its GitHub Actions run, when it runs or ran there (docs/github-actions.md#state-from-github). */
  actions?: ActionsRun;
}

/** A story's GitHub Actions run: `status`'s `actions`, or saga/epicProgress's `url` and `actions` (its state as `status`). */
export interface ActionsRun {
  url?: string;
  status?: string;
  conclusion?: string;
  unknown?: string;
}

/** The Actions run's state as saga-lsp shows it: GitHub's status, its conclusion once completed, or unknown. */
export function actionsState(a: ActionsRun): string {
  if (a.unknown) {
    return 'unknown';
  }
  return a.status === 'completed' && a.conclusion ? a.conclusion : a.status ?? '';
}

/** An epic's run (`status <epic> --format json`'s `epic`). */
export interface EpicRun {
  id: string;
  state: string; // idle | running | died | the last run's end: completed, failed, blocked, stopped, …
  session: string;
  pid: number;
  maxParallel: number;
  running: string[];
  done: number;
  total: number;
  cost: number;
  stories: EpicStoryRun[];
}

/** saga/epicProgress (docs/protocol-extensions.md, epic runs). */
export interface EpicProgress {
  epic: string;
  session?: string;
  state: string; // running | completed | failed | blocked | timeout | stopped | died
  running?: string[];
  done?: number;
  total?: number;
  held?: string[];
  /** Ended without completing and holding dependents: failed, blocked or timeout (stories[].state says which). */
  failed?: string[];
  cost?: number;
  stories?: { id: string; state: string; heldBy?: string[]; done?: number; total?: number; url?: string; actions?: string }[];
}

/** What a run of the CLI printed. */
export interface CliResult {
  stdout: string;
  stderr: string;
  code: number;
}

export const RUNNING_STATES = new Set(['starting', 'running']);

export function isRunningState(state: string | undefined): boolean {
  return state !== undefined && RUNNING_STATES.has(state);
}

function emptyWorker(): WorkerInfo {
  return { running: false, pid: 0, session: '', outputFile: '', state: 'idle', cycle: 0, exitCode: null, started: '' };
}

export class SagaModel implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires after every change of the model (a refresh or a notification). */
  readonly onDidChange = this.changed.event;

  stories = new Map<string, StoryInfo>();
  epics = new Map<string, EpicInfo>();
  /** Each epic's run state, by epic id. */
  epicRuns = new Map<string, EpicRun>();
  /** Why the last refresh failed ('' when it did not). */
  error = '';
  loaded = false;

  private readonly loads = new Serial(() => this.load());
  /** saga/epicProgress notifications applied, by epic: a refresh keeps what came after its reads began. */
  private readonly epicNotes = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly root: string,
    private readonly serverPath: () => string,
    private readonly log: (msg: string) => void,
  ) {}

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.changed.dispose();
  }

  /** Refresh soon; many calls within `ms` make one refresh. */
  scheduleRefresh(ms = 400): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, ms);
  }

  /** Reload from `saga-lsp status` and the epic files; one at a time. */
  refresh(): Promise<void> {
    return this.loads.run();
  }

  private async load(): Promise<void> {
    const epics = readEpics(this.root);
    const notesBefore = new Map(this.epicNotes);
    const runs = Promise.all([...epics.keys()].map((id) => this.epicRun(id)));
    let stories: StoryInfo[];
    try {
      stories = await this.status();
      this.error = '';
    } catch (e) {
      this.error = e instanceof Error ? e.message : String(e);
      this.log(`status failed: ${this.error}`);
      this.loaded = true;
      this.changed.fire();
      return;
    }
    const next = new Map<string, StoryInfo>();
    for (const s of stories) {
      s.tasks = s.tasks ?? [];
      s.worker = { ...emptyWorker(), ...(s.worker ?? {}) };
      const old = this.stories.get(s.id);
      // A worker the server told us about and `status` does not see yet (its
      // lock is not taken yet) stays running until it reports its end.
      if (old && isRunningState(old.worker.state) && !s.worker.running && !s.worker.session) {
        s.worker = old.worker;
      }
      next.set(s.id, s);
    }
    for (const s of next.values()) {
      if (s.epic && !epics.has(s.epic)) {
        epics.set(s.epic, { id: s.epic, title: '', status: '', file: '' });
      }
    }
    const epicRuns = new Map<string, EpicRun>();
    const read = await runs;
    for (const [i, id] of [...epics.keys()].entries()) {
      const known = this.epicRuns.get(id);
      // A notification newer than the read wins (the refresh the run's end
      // asks for fills in the rest); a failed read keeps what was known
      // rather than forgetting a run (a `status` cut short under load).
      const newer = (this.epicNotes.get(id) ?? 0) !== (notesBefore.get(id) ?? 0);
      const run = newer && known ? known : (read[i] ?? known);
      if (run) {
        epicRuns.set(id, run);
      }
    }
    this.stories = next;
    this.epics = epics;
    this.epicRuns = epicRuns;
    this.loaded = true;
    this.changed.fire();
  }

  /** Runs `saga-lsp <args> --root <root>`; never rejects (a failure to start is code -1). */
  cli(args: string[]): Promise<CliResult> {
    return new Promise((resolve) => {
      execFile(
        this.serverPath(),
        [...args, '--root', this.root],
        { cwd: this.root, maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
          resolve({ stdout, stderr: stderr || (err && !stdout ? err.message : ''), code });
        },
      );
    });
  }

  private async status(): Promise<StoryInfo[]> {
    const r = await this.cli(['status', '--format', 'json', '--tasks']);
    // exit 1 is not an error for status; only unreadable output is.
    if (!r.stdout) {
      throw new Error(r.stderr.trim() || `saga-lsp status exited ${r.code}`);
    }
    try {
      const parsed = JSON.parse(r.stdout) as { stories?: StoryInfo[] };
      return parsed.stories ?? [];
    } catch (e) {
      throw new Error(`saga-lsp status printed no JSON: ${r.stderr.trim() || String(e)}`);
    }
  }

  /** The epic's run state; undefined (logged) when status cannot tell. */
  private async epicRun(epic: string): Promise<EpicRun | undefined> {
    const r = await this.cli(['status', epic, '--epic', '--format', 'json']);
    try {
      const run = (JSON.parse(r.stdout) as { epic?: EpicRun }).epic;
      if (run) {
        run.running = run.running ?? [];
        run.stories = run.stories ?? [];
        return run;
      }
    } catch {
      // below
    }
    this.log(`status ${epic} --epic: ${r.stderr.trim() || `exit ${r.code}`}`);
    return undefined;
  }

  /** Applies saga/taskStatus: the task's new status, the story's done count. */
  applyTaskStatus(p: TaskStatus): void {
    const s = this.stories.get(p.story);
    if (!s) {
      this.scheduleRefresh();
      return;
    }
    let t = s.tasks.find((x) => x.id === p.task);
    if (!t) {
      t = { id: p.task, subject: p.subject ?? '', status: p.to, blockedBy: [] };
      s.tasks.push(t);
      s.tasks.sort((a, b) => a.id.localeCompare(b.id));
    }
    t.status = p.to;
    if (p.subject) {
      t.subject = p.subject;
    }
    s.total = s.tasks.length;
    s.done = s.tasks.filter((x) => x.status === 'completed').length;
    s.status = storyStatusFromTasks(s);
    this.changed.fire();
  }

  /** Applies saga/workerProgress: worker state, done/total. */
  applyWorkerProgress(p: WorkerProgress): void {
    const s = this.stories.get(p.story);
    if (!s) {
      this.scheduleRefresh();
      return;
    }
    const w = s.worker;
    w.state = p.state;
    w.running = isRunningState(p.state);
    if (p.session) {
      w.session = p.session;
    }
    if (p.outputFile) {
      w.outputFile = p.outputFile;
    }
    if (typeof p.cycle === 'number') {
      w.cycle = p.cycle;
    }
    if (typeof p.total === 'number' && p.total > 0) {
      s.total = p.total;
      s.done = p.done ?? s.done;
      if (s.done >= s.total) {
        s.status = 'completed';
      } else if (w.running && s.status !== 'completed') {
        s.status = 'in_progress';
      }
    }
    this.changed.fire();
    if (!w.running) {
      // The worker ended: the worktree copy has the final statuses.
      this.scheduleRefresh(200);
    }
  }

  /**
   * Applies saga/epicProgress: the run's state and counts, and each story's
   * state in it; `status` fills in the rest (branches, bases) at the end.
   */
  applyEpicProgress(p: EpicProgress): void {
    const run: EpicRun = this.epicRuns.get(p.epic) ?? {
      id: p.epic, state: 'idle', session: '', pid: 0, maxParallel: 0, running: [], done: 0, total: 0, cost: 0, stories: [],
    };
    run.state = p.state;
    run.session = p.session ?? run.session;
    run.running = p.running ?? run.running;
    run.done = p.done ?? run.done;
    run.total = p.total ?? run.total;
    run.cost = p.cost ?? run.cost;
    let unknown = false;
    for (const ps of p.stories ?? []) {
      let s = run.stories.find((x) => x.id === ps.id);
      if (!s) {
        unknown = true;
        s = { id: ps.id, state: ps.state, blockedBy: [], heldBy: [], conflicts: [], branch: '', base: '', pr: '', cost: 0, session: '', done: 0, total: 0 };
        run.stories.push(s);
      }
      s.state = ps.state;
      s.heldBy = ps.heldBy ?? [];
      s.done = ps.done ?? s.done;
      s.total = ps.total ?? s.total;
      if (ps.actions !== undefined) {
        s.actions = { url: ps.url, status: ps.actions };
      }
    }
    this.epicRuns.set(p.epic, run);
    this.epicNotes.set(p.epic, (this.epicNotes.get(p.epic) ?? 0) + 1);
    this.changed.fire();
    if (unknown || p.state !== 'running') {
      this.scheduleRefresh(200);
    }
  }

  /** The run state of a story in its epic's run, if it has an epic. */
  storyRun(story: string): EpicStoryRun | undefined {
    const epic = this.stories.get(story)?.epic;
    return epic ? this.epicRuns.get(epic)?.stories.find((s) => s.id === story) : undefined;
  }

  /** Whether the story's epic is running now (its workers are the epic's). */
  inRunningEpic(story: string): boolean {
    const epic = this.stories.get(story)?.epic;
    return !!epic && this.epicRuns.get(epic)?.state === 'running';
  }

  /** Whether the worker session is the one the story's epic run started. */
  inEpicRun(story: string, session: string): boolean {
    return !!session && this.storyRun(story)?.session === session;
  }

  runningEpics(): EpicRun[] {
    return [...this.epicRuns.values()].filter((r) => r.state === 'running');
  }

  runningStories(): StoryInfo[] {
    return [...this.stories.values()].filter((s) => s.worker.running);
  }

  storiesOf(epic: string): StoryInfo[] {
    return [...this.stories.values()].filter((s) => s.epic === epic).sort(byId);
  }

  standaloneStories(): StoryInfo[] {
    return [...this.stories.values()].filter((s) => !s.epic).sort(byId);
  }

  sortedEpics(): EpicInfo[] {
    return [...this.epics.values()].sort(byId);
  }

  storyFile(story: string): string {
    return path.join(this.root, '.saga', 'stories', story, 'story.json');
  }

  /** The story's live journal: the worktree copy's while there is one, else the main checkout's; undefined when neither exists. */
  journalFile(story: string): string | undefined {
    const copies = [
      path.join(this.root, '.saga', 'worktrees', story, '.saga', 'stories', story, 'journal.md'),
      path.join(this.root, '.saga', 'stories', story, 'journal.md'),
    ];
    return copies.find((f) => fs.existsSync(f));
  }

  taskFile(story: string, task: string): string {
    return path.join(this.root, '.saga', 'stories', story, `${task}.json`);
  }
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id.localeCompare(b.id);
}

export function storyStatusFromTasks(s: StoryInfo): string {
  if (s.total > 0 && s.done === s.total) {
    return 'completed';
  }
  if (s.tasks.some((t) => t.status === 'in_progress') || s.done > 0) {
    return 'in_progress';
  }
  return s.status === 'completed' ? 'in_progress' : s.status || 'pending';
}

/** The epics under .saga/epics, in either dialect (<id>.json or <id>/epic.json). */
function readEpics(root: string): Map<string, EpicInfo> {
  const out = new Map<string, EpicInfo>();
  const dir = path.join(root, '.saga', 'epics');
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    let id: string;
    let file: string;
    if (e.isDirectory()) {
      id = e.name;
      file = path.join(dir, e.name, 'epic.json');
      if (!fs.existsSync(file)) {
        continue;
      }
    } else if (e.isFile() && e.name.endsWith('.json')) {
      id = e.name.slice(0, -'.json'.length);
      file = path.join(dir, e.name);
    } else {
      continue;
    }
    let title = '';
    let status = '';
    try {
      const j = JSON.parse(fs.readFileSync(file, 'utf8')) as { title?: unknown; status?: unknown };
      title = typeof j.title === 'string' ? j.title : '';
      status = typeof j.status === 'string' ? j.status : '';
    } catch {
      // A broken epic file still gets a node; the Problems panel says why.
    }
    out.set(id, { id, title, status, file });
  }
  return out;
}

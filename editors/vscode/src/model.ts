// The workspace as the SAGA view shows it: epics, stories and tasks with their
// statuses and the state of each story's worker.
//
// The base comes from `saga-lsp status --format json --tasks` (statuses read
// from each story's worktree copy, where a running worker writes) plus the epic
// files for their titles; the server's saga/taskStatus and saga/workerProgress
// notifications are applied on top as they arrive, and every change of a file
// under .saga/ triggers a fresh `status` (debounced).

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

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

/** saga/workerProgress (design.md §5, docs/protocol-extensions.md). */
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
  /** Why the last refresh failed ('' when it did not). */
  error = '';
  loaded = false;

  private inFlight: Promise<void> | undefined;
  private again = false;
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
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    this.inFlight = this.load().finally(() => {
      this.inFlight = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.inFlight;
  }

  private async load(): Promise<void> {
    const epics = readEpics(this.root);
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
    this.stories = next;
    this.epics = epics;
    this.loaded = true;
    this.changed.fire();
  }

  private status(): Promise<StoryInfo[]> {
    return new Promise((resolve, reject) => {
      execFile(
        this.serverPath(),
        ['status', '--format', 'json', '--tasks', '--root', this.root],
        { cwd: this.root, maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
        (err, stdout, stderr) => {
          // exit 1 is not an error for status; only unreadable output is.
          if (err && !stdout) {
            reject(new Error(stderr.trim() || err.message));
            return;
          }
          try {
            const parsed = JSON.parse(stdout) as { stories?: StoryInfo[] };
            resolve(parsed.stories ?? []);
          } catch (e) {
            reject(new Error(`saga-lsp status printed no JSON: ${stderr.trim() || String(e)}`));
          }
        },
      );
    });
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

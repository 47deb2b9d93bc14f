// "When a run needs you": a story of a run that ends failed, blocked (a
// blocker in its journal), at a limit (timeout), or held (its blockers
// failed, or their branches conflict) is said once, as one VS Code
// notification with "Open journal" and "Show output". Progress itself stays
// in the view and the status bar: nothing else notifies.
//
// One end reaches us several times: the worker's saga/workerProgress, then
// every later saga/epicProgress of the run (its failed[] and held[] lists
// keep the story), and again after a window reload. Each end is known by the
// story and its run — the worker's session, the epic run's session, or both
// — and every name it has is remembered in the workspace state, so it is
// never said twice. Ends that arrive within a second are said together, one
// notification per epic, so that a failure and the stories it holds read as
// one event. A worker's end in a running epic waits for the epic's own
// report of it — the saga/epicProgress that lists it, which names what it
// holds in the same message — however late that comes on a loaded machine
// (up to EPIC_REPORT_MS, if the run's report never comes): a fixed second
// once said the failure alone and the held story a moment later, and so
// did 15 s on a machine loaded by two test runs, where the language
// server's epic loop rested 15 s after a slow pass
// (docs/architecture.md#an-epic-of-200-stories). The view and the status
// bar show the end at once; only the notification waits.

import * as vscode from 'vscode';
import { EpicProgress, SagaModel, WorkerProgress } from './model';

/** The worker end states that need someone (stopped was someone's doing). */
const WORKER_ENDS = new Set(['failed', 'blocked', 'timeout']);
/** Which of two reports of one end to keep. */
const RANK: Record<string, number> = { held: 0, failed: 1, blocked: 2, timeout: 2 };
const GATHER_MS = 1000;
const EPIC_REPORT_MS = 60000;
const MEMORY_KEY = 'saga.needsYou.said';
const REMEMBERED = 500;

interface End {
  story: string;
  state: string; // failed | blocked | timeout | held
  epic: string;
  epicSession: string;
  workerSession: string;
  /** What holds a held story, as the epic report that said it held named it. */
  heldBy?: string[];
}

export interface NeedsYouActions {
  openJournal(story: string): Promise<void>;
  showOutput(story: string): void;
}

export class NeedsYou implements vscode.Disposable {
  private readonly pending = new Map<string, End>();
  /** Pending worker ends in a running epic whose epic report has not come. */
  private readonly awaitingEpic = new Set<string>();
  private timer: NodeJS.Timeout | undefined; // the gather window
  private cap: NodeJS.Timeout | undefined; // the longest wait for an epic's report
  private gathered = false; // the window has passed

  constructor(
    private readonly model: SagaModel,
    private readonly memory: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
    private readonly actions: NeedsYouActions,
  ) {}

  dispose(): void {
    clearTimeout(this.timer);
    clearTimeout(this.cap);
  }

  onWorkerProgress(p: WorkerProgress): void {
    if (WORKER_ENDS.has(p.state)) {
      const epic = this.model.stories.get(p.story)?.epic ?? '';
      this.add({ story: p.story, state: p.state, epic, epicSession: '', workerSession: p.session ?? '' });
      // Unless the epic's report came first (its session is then the end's).
      if (epic && this.model.inRunningEpic(p.story) && !this.pending.get(p.story)?.epicSession) {
        this.awaitingEpic.add(p.story);
      }
    }
  }

  onEpicProgress(p: EpicProgress): void {
    const session = p.session ?? '';
    for (const story of p.failed ?? []) {
      const state = p.stories?.find((s) => s.id === story)?.state;
      this.add({ story, state: state && WORKER_ENDS.has(state) ? state : 'failed', epic: p.epic, epicSession: session, workerSession: '' });
      this.awaitingEpic.delete(story);
    }
    for (const story of p.held ?? []) {
      const heldBy = p.stories?.find((s) => s.id === story)?.heldBy ?? [];
      this.add({ story, state: 'held', epic: p.epic, epicSession: session, workerSession: '', heldBy });
    }
    if (p.state !== 'running') {
      // The run ended: what it did not report, it never will.
      for (const story of this.awaitingEpic) {
        if (this.pending.get(story)?.epic === p.epic) {
          this.awaitingEpic.delete(story);
        }
      }
    }
    this.flushIfReady();
  }

  private add(e: End): void {
    const had = this.pending.get(e.story);
    if (had) {
      // The worker's own end (blocked, timeout) says more than the epic's "failed".
      if (RANK[e.state] > RANK[had.state]) {
        had.state = e.state;
      }
      had.epic ||= e.epic;
      had.epicSession ||= e.epicSession;
      had.workerSession ||= e.workerSession;
      if (e.heldBy?.length) {
        had.heldBy = e.heldBy;
      }
    } else {
      this.pending.set(e.story, { ...e });
    }
    if (!this.timer) {
      this.gathered = false;
      this.timer = setTimeout(() => {
        this.gathered = true;
        this.flushIfReady();
      }, GATHER_MS);
      this.cap = setTimeout(() => this.flush(), EPIC_REPORT_MS);
    }
  }

  /** Says what is pending once the window has passed and no end waits for its epic's report. */
  private flushIfReady(): void {
    if (this.timer && this.gathered && this.awaitingEpic.size === 0) {
      this.flush();
    }
  }

  private flush(): void {
    clearTimeout(this.timer);
    clearTimeout(this.cap);
    this.timer = this.cap = undefined;
    this.awaitingEpic.clear();
    const ends = [...this.pending.values()];
    this.pending.clear();
    const said = new Set(this.memory.get<string[]>(MEMORY_KEY, []));
    const fresh: End[] = [];
    for (const e of ends) {
      this.complete(e);
      const names = namesOf(e);
      const already = names.find((n) => said.has(n));
      if (already) {
        this.log.info(`needs-you: ${e.story} ${e.state} already said (${already})`);
      } else {
        fresh.push(e);
      }
      for (const n of names) {
        said.add(n);
      }
    }
    void this.memory.update(MEMORY_KEY, [...said].slice(-REMEMBERED));
    const byEpic = new Map<string, End[]>();
    for (const e of fresh) {
      byEpic.set(e.epic, [...(byEpic.get(e.epic) ?? []), e]);
    }
    for (const [epic, group] of byEpic) {
      this.say(epic, group);
    }
  }

  /** Fills in the run's other name from the model: the epic run a worker belongs to, or an epic run's worker. */
  private complete(e: End): void {
    const run = e.epic ? this.model.epicRuns.get(e.epic) : undefined;
    const storyRun = this.model.storyRun(e.story);
    if (!e.epicSession && run?.session && (run.state === 'running' || this.model.inEpicRun(e.story, e.workerSession))) {
      e.epicSession = run.session;
    }
    if (!e.workerSession && e.state !== 'held' && storyRun?.session && run?.session === e.epicSession) {
      e.workerSession = storyRun.session;
    }
  }

  private say(epic: string, group: End[]): void {
    // Ends first (what went wrong), then what they hold.
    group.sort((a, b) => Number(a.state === 'held') - Number(b.state === 'held') || a.story.localeCompare(b.story));
    // What holds a story as the report that said it held named it: the
    // model may be refreshed from `status` meanwhile (under CI's load a
    // refresh between the report and the saying left it without).
    const heldBy = (e: End) => (e.heldBy?.length ? e.heldBy : this.model.storyRun(e.story)?.heldBy ?? []);
    const parts = group.map((e) => describe(e, heldBy(e)));
    const text = `SAGA${epic ? ` epic ${epic}` : ''}: ${parts.join('; ')}.`;
    const first = group[0];
    // For a held story, its blocker's journal and output say why; of several
    // ends, the first one that wrote a journal (a blocker is written there).
    const subject = first.state === 'held' ? (heldBy(first)[0] ?? first.story) : first.story;
    const journal = group.find((e) => e.state !== 'held' && this.model.journalFile(e.story))?.story ?? subject;
    this.log.info(`needs-you: said ${group.map((e) => `${e.story} ${e.state}`).join(', ')}: ${text}`);
    void vscode.window.showWarningMessage(text, 'Open journal', 'Show output').then(async (action) => {
      if (action === 'Open journal') {
        await this.actions.openJournal(journal);
      } else if (action === 'Show output') {
        this.actions.showOutput(subject);
      }
    });
  }
}

function namesOf(e: End): string[] {
  const names: string[] = [];
  if (e.workerSession) {
    names.push(`${e.story}@${e.workerSession}`);
  }
  if (e.epicSession) {
    names.push(`${e.story}@${e.epicSession}`);
  }
  return names.length ? names : [`${e.story}@${e.state}`];
}

function describe(e: End, heldBy: string[]): string {
  switch (e.state) {
    case 'held':
      return heldBy.length ? `${e.story} is held by ${heldBy.join(', ')}` : `${e.story} is held`;
    case 'blocked':
      return `${e.story} is blocked (see its journal)`;
    case 'timeout':
      return `${e.story} stopped at a limit`;
    default:
      return `${e.story} failed`;
  }
}

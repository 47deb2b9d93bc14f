// Running workers: a status bar item ("$(sync~spin) SAGA user-auth--api 3/5")
// and one output channel per story streaming its worker's log (the
// `outputFile` of saga/workerProgress, tailed from disk). Workers of a
// running epic are left to the epic's status bar item (epics.ts).

import * as fs from 'fs';
import * as vscode from 'vscode';
import { isRunningState, SagaModel, WorkerProgress } from './model';

const TAIL_INTERVAL_MS = 250;
/** The status bar icon of a worker's end state. */
const END_ICONS: Record<string, string> = {
  completed: 'pass',
  stopped: 'debug-stop',
  blocked: 'debug-pause',
  timeout: 'watch',
  failed: 'error',
};
const RESULT_SHOWN_MS = 60_000;

/** Streams a growing log file into an output channel. */
export class Tail implements vscode.Disposable {
  private offset = 0;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private partial = Buffer.alloc(0);

  constructor(
    readonly file: string,
    private readonly channel: vscode.OutputChannel,
  ) {
    this.timer = setInterval(() => this.poll(), TAIL_INTERVAL_MS);
    this.poll();
  }

  /** Reads what is left, then stops. */
  finish(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    // The last lines may land right after the final notification.
    setTimeout(() => this.poll(true), 300);
  }

  dispose(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private poll(last = false): void {
    if (this.reading) {
      return;
    }
    this.reading = true;
    try {
      let size: number;
      try {
        size = fs.statSync(this.file).size;
      } catch {
        return; // not created yet
      }
      if (size < this.offset) {
        this.offset = 0; // truncated: start over
      }
      if (size > this.offset) {
        const fd = fs.openSync(this.file, 'r');
        try {
          const buf = Buffer.alloc(size - this.offset);
          const n = fs.readSync(fd, buf, 0, buf.length, this.offset);
          this.offset += n;
          this.emit(buf.subarray(0, n));
        } finally {
          fs.closeSync(fd);
        }
      }
      if (last && this.partial.length > 0) {
        this.channel.appendLine(this.partial.toString('utf8'));
        this.partial = Buffer.alloc(0);
      }
    } catch {
      // a vanished file: nothing more to show
    } finally {
      this.reading = false;
    }
  }

  // Whole lines only, so that a multi-byte character is never split.
  private emit(chunk: Buffer): void {
    const data = Buffer.concat([this.partial, chunk]);
    const nl = data.lastIndexOf(0x0a);
    if (nl < 0) {
      this.partial = data;
      return;
    }
    this.channel.append(data.subarray(0, nl + 1).toString('utf8'));
    this.partial = data.subarray(nl + 1);
  }
}

interface WorkerView {
  story: string;
  session: string;
  outputFile: string;
  state: string;
  done: number;
  total: number;
  step: string;
  ended?: number;
  tail?: Tail;
}

export class Workers implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly channels = new Map<string, vscode.OutputChannel>();
  private readonly workers = new Map<string, WorkerView>();
  /** Stories whose run this window started: their output is shown at once. */
  private readonly reveal = new Set<string>();
  private hideTimer: NodeJS.Timeout | undefined;

  constructor(private readonly model: SagaModel) {
    this.item = vscode.window.createStatusBarItem('saga.workers', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'SAGA workers';
    model.onDidChange(() => this.syncFromModel());
  }

  dispose(): void {
    for (const w of this.workers.values()) {
      w.tail?.dispose();
    }
    for (const c of this.channels.values()) {
      c.dispose();
    }
    this.item.dispose();
    if (this.hideTimer) {
      clearTimeout(this.hideTimer);
    }
  }

  /** This window asked for a run of `story`: show its output when it starts. */
  expect(story: string): void {
    this.reveal.add(story);
  }

  channel(story: string): vscode.OutputChannel {
    let c = this.channels.get(story);
    if (!c) {
      c = vscode.window.createOutputChannel(`SAGA: ${story}`);
      this.channels.set(story, c);
    }
    return c;
  }

  /** Shows the story's worker output (from `outputFile` when given). */
  show(story: string, outputFile?: string): void {
    const c = this.channel(story);
    const file = outputFile || this.workers.get(story)?.outputFile || this.model.stories.get(story)?.worker.outputFile;
    if (file) {
      const w = this.workers.get(story);
      if (!w?.tail || w.tail.file !== file) {
        this.track({ story, state: w?.state ?? 'completed', outputFile: file });
      }
    } else {
      c.appendLine(`No worker output for ${story} yet.`);
    }
    c.show(true);
  }

  /** The output file of the story's current or last worker, if known. */
  outputFile(story: string): string | undefined {
    return this.workers.get(story)?.outputFile || this.model.stories.get(story)?.worker.outputFile || undefined;
  }

  /**
   * runStory answered: a worker started (its saga/workerProgress may have
   * come first; a state it reported is never taken back).
   */
  started(story: string, session: string | undefined, outputFile: string | undefined, finished: boolean): void {
    const w = this.workers.get(story);
    const same = !!w && !!session && w.session === session;
    const state = same ? w!.state : finished ? 'completed' : 'starting';
    this.track({ story, session, state, outputFile });
    this.render();
    if (finished) {
      this.model.scheduleRefresh(0);
    }
  }

  /** saga/workerProgress. */
  onProgress(p: WorkerProgress): void {
    this.track(p);
    this.render();
  }

  private track(p: WorkerProgress): void {
    let w = this.workers.get(p.story);
    const newSession = !!p.session && !!w && w.session !== '' && w.session !== p.session;
    if (!w || newSession) {
      w?.tail?.dispose();
      w = { story: p.story, session: p.session ?? '', outputFile: '', state: p.state, done: 0, total: 0, step: '' };
      this.workers.set(p.story, w);
    }
    if (p.session) {
      w.session = p.session;
    }
    w.state = p.state;
    if (typeof p.total === 'number' && p.total > 0) {
      w.total = p.total;
      w.done = p.done ?? w.done;
    }
    if (p.step) {
      w.step = p.step;
    }
    if (p.outputFile && (!w.tail || w.tail.file !== p.outputFile)) {
      w.tail?.dispose();
      const c = this.channel(p.story);
      c.appendLine(`──── ${p.story}: worker ${w.session || ''} → ${p.outputFile}`);
      w.outputFile = p.outputFile;
      w.tail = new Tail(p.outputFile, c);
      if (this.reveal.delete(p.story)) {
        c.show(true);
      }
    }
    if (isRunningState(p.state)) {
      w.ended = undefined;
    } else if (!w.ended) {
      w.ended = Date.now();
      w.tail?.finish();
    }
  }

  /** Workers already running when the window opened, or found by a refresh. */
  private syncFromModel(): void {
    for (const s of this.model.stories.values()) {
      const known = this.workers.get(s.id);
      if (s.worker.running && (!known || !isRunningState(known.state))) {
        if (!known || !known.session || known.session === s.worker.session) {
          this.track({
            story: s.id,
            session: s.worker.session,
            state: 'running',
            done: s.done,
            total: s.total,
            outputFile: s.worker.outputFile,
          });
        }
      } else if (known && isRunningState(known.state) && !s.worker.running && s.worker.session === known.session && s.worker.state !== 'idle') {
        // The end was missed (no notification): take it from `status`.
        this.track({ story: s.id, session: s.worker.session, state: s.worker.state, done: s.done, total: s.total });
      }
    }
    this.render();
  }

  private render(): void {
    const own = [...this.workers.values()].filter((w) => !this.model.inRunningEpic(w.story));
    const running = own.filter((w) => isRunningState(w.state));
    if (this.hideTimer) {
      clearTimeout(this.hideTimer);
      this.hideTimer = undefined;
    }
    if (running.length === 1) {
      const w = running[0];
      this.item.text = `$(sync~spin) SAGA ${w.story} ${w.done}/${w.total}`;
      this.item.tooltip = `SAGA worker for ${w.story}: ${w.state}${w.step ? ` (${w.step})` : ''} — click for its output`;
      this.item.command = { command: 'saga.showOutput', title: 'Show worker output', arguments: [w.story] };
      this.item.backgroundColor = undefined;
      this.item.show();
      return;
    }
    if (running.length > 1) {
      this.item.text = `$(sync~spin) SAGA ${running.length} workers`;
      this.item.tooltip = running.map((w) => `${w.story} ${w.done}/${w.total} ${w.state}`).join('\n');
      this.item.command = 'saga.showOutput';
      this.item.backgroundColor = undefined;
      this.item.show();
      return;
    }
    // Nothing runs: the last result, for a while.
    const last = own.filter((w) => w.ended && !this.model.inEpicRun(w.story, w.session)).sort((a, b) => (b.ended ?? 0) - (a.ended ?? 0))[0];
    if (!last || Date.now() - (last.ended ?? 0) > RESULT_SHOWN_MS) {
      this.item.hide();
      return;
    }
    const ok = last.state === 'completed';
    this.item.text = `$(${END_ICONS[last.state] ?? 'error'}) SAGA ${last.story} ${last.state} ${last.done}/${last.total}`;
    this.item.tooltip = `SAGA worker for ${last.story} ended: ${last.state} — click for its output`;
    this.item.command = { command: 'saga.showOutput', title: 'Show worker output', arguments: [last.story] };
    this.item.backgroundColor = ok ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
    this.item.show();
    this.hideTimer = setTimeout(() => this.render(), RESULT_SHOWN_MS - (Date.now() - (last.ended ?? 0)) + 10);
  }
}

// Running epics: a status bar item ("$(sync~spin) SAGA shop 3/8 ▶2", the
// last result for a minute after the run) and an output channel per epic
// streaming its runner's log. The state is the model's (saga/epicProgress and
// `status <epic>`); the runner's log file is the runEpic answer's
// `outputFile`, or for a run started elsewhere `<session dir>/<session>.log`
// (docs/commands.md, run), the session dir as the server names it in its
// initialize result (capabilities.experimental.saga.sessionDir): never
// computed here, since only the server knows its environment's default.

import * as path from 'path';
import * as vscode from 'vscode';
import { EpicRun, SagaModel } from './model';
import { Tail } from './workers';

const RESULT_SHOWN_MS = 60_000;
const END_ICONS: Record<string, string> = { completed: 'pass', stopped: 'debug-stop', blocked: 'debug-pause', timeout: 'watch' };

export class EpicRuns implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly channels = new Map<string, { channel: vscode.OutputChannel; tail?: Tail }>();
  private readonly outputFiles = new Map<string, string>();
  /** Epics seen running, and when each run was seen ending. */
  private readonly wasRunning = new Set<string>();
  private readonly ended = new Map<string, number>();
  private hideTimer: NodeJS.Timeout | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly model: SagaModel,
    private readonly sessionDir: () => string | undefined,
  ) {
    this.item = vscode.window.createStatusBarItem('saga.epics', vscode.StatusBarAlignment.Left, 11);
    this.item.name = 'SAGA epic runs';
    this.subscription = model.onDidChange(() => this.render());
  }

  dispose(): void {
    this.subscription.dispose();
    for (const c of this.channels.values()) {
      c.tail?.dispose();
      c.channel.dispose();
    }
    this.item.dispose();
    if (this.hideTimer) {
      clearTimeout(this.hideTimer);
    }
  }

  /** runEpic answered: the runner's log is `outputFile`. */
  started(epic: string, outputFile: string | undefined): void {
    if (outputFile) {
      this.outputFiles.set(epic, outputFile);
    }
  }

  /** Shows the epic runner's log, streaming. */
  show(epic: string): void {
    let c = this.channels.get(epic);
    if (!c) {
      c = { channel: vscode.window.createOutputChannel(`SAGA: epic ${epic}`) };
      this.channels.set(epic, c);
    }
    const file = this.outputFile(epic);
    if (!file) {
      c.channel.appendLine(`Epic ${epic} has not run yet.`);
    } else if (c.tail?.file !== file) {
      c.tail?.dispose();
      c.channel.appendLine(`──── epic ${epic}: runner → ${file}`);
      c.tail = new Tail(file, c.channel);
    }
    c.channel.show(true);
  }

  private outputFile(epic: string): string | undefined {
    const session = this.model.epicRuns.get(epic)?.session;
    const known = this.outputFiles.get(epic);
    if (known && (!session || path.basename(known).startsWith(session))) {
      return known;
    }
    const dir = this.sessionDir();
    return session && dir ? path.join(dir, `${session}.log`) : undefined;
  }

  private render(): void {
    const running = this.model.runningEpics();
    for (const r of this.model.epicRuns.values()) {
      if (r.state === 'running') {
        this.wasRunning.add(r.id);
        this.ended.delete(r.id);
      } else if (this.wasRunning.delete(r.id)) {
        this.ended.set(r.id, Date.now());
      }
    }
    if (this.hideTimer) {
      clearTimeout(this.hideTimer);
      this.hideTimer = undefined;
    }
    if (running.length === 1) {
      const r = running[0];
      this.showItem(`$(sync~spin) SAGA ${r.id} ${r.done}/${r.total} ▶${r.running.length}`, tooltip(r), r.id, undefined);
      return;
    }
    if (running.length > 1) {
      this.item.text = `$(sync~spin) SAGA ${running.length} epics`;
      this.item.tooltip = running.map((r) => `${r.id} ${r.done}/${r.total} ▶${r.running.length}`).join('\n');
      this.item.command = 'saga.showGraph';
      this.item.backgroundColor = undefined;
      this.item.show();
      return;
    }
    // Nothing runs: the last result, for a while.
    const [last, at] = [...this.ended.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
    const r = last ? this.model.epicRuns.get(last) : undefined;
    if (!r || at === undefined || Date.now() - at > RESULT_SHOWN_MS) {
      this.item.hide();
      return;
    }
    const warn = r.state === 'completed' ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
    this.showItem(`$(${END_ICONS[r.state] ?? 'error'}) SAGA ${r.id} ${r.state} ${r.done}/${r.total}`, tooltip(r), r.id, warn);
    this.hideTimer = setTimeout(() => this.render(), RESULT_SHOWN_MS - (Date.now() - at) + 10);
  }

  private showItem(text: string, tip: string, epic: string, background: vscode.ThemeColor | undefined): void {
    this.item.text = text;
    this.item.tooltip = `${tip}\nClick for the dependency graph.`;
    this.item.command = { command: 'saga.showGraph', title: 'Show dependency graph', arguments: [{ epic }] };
    this.item.backgroundColor = background;
    this.item.show();
  }
}

function tooltip(r: EpicRun): string {
  const lines = [`SAGA epic ${r.id}: ${r.state}, ${r.done}/${r.total} stories completed`];
  if (r.running.length) {
    lines.push(`running: ${r.running.join(', ')}`);
  }
  const held = r.stories.filter((s) => s.state === 'held').map((s) => s.id);
  if (held.length) {
    lines.push(`held: ${held.join(', ')}`);
  }
  if (r.cost) {
    lines.push(`cost: $${r.cost.toFixed(2)}`);
  }
  return lines.join('\n');
}

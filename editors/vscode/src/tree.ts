// The SAGA view in the explorer: epics → stories → tasks, each with a status
// icon; stories and epics with a done/total description. An epic that has
// been run shows its run (`2/3 stories · running ▶1`) and each child its
// state in it (`waiting`, `running`, `held by shop--a`, …).

import * as vscode from 'vscode';
import { actionsState, EpicInfo, EpicStoryRun, SagaModel, StoryInfo, TaskInfo } from './model';

export type SagaNode =
  | { kind: 'epic'; epic: EpicInfo }
  | { kind: 'story'; story: StoryInfo }
  | { kind: 'task'; story: StoryInfo; task: TaskInfo }
  | { kind: 'message'; text: string; tooltip?: string };

export class SagaTree implements vscode.TreeDataProvider<SagaNode> {
  private readonly changed = new vscode.EventEmitter<SagaNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly model: SagaModel,
    // No server: nothing to list, so that the view's welcome content
    // (package.json, saga.serverMissing) says how to get one.
    private readonly serverMissing: () => boolean,
  ) {
    model.onDidChange(() => this.changed.fire());
  }

  /** Draws the view again (the server came or went). */
  refresh(): void {
    this.changed.fire();
  }

  getChildren(node?: SagaNode): SagaNode[] {
    const m = this.model;
    if (!node) {
      if (this.serverMissing()) {
        return [];
      }
      if (!m.loaded) {
        return [{ kind: 'message', text: 'Loading…' }];
      }
      if (m.error && m.stories.size === 0) {
        return [{ kind: 'message', text: `saga-lsp status failed: ${m.error.split('\n')[0]}`, tooltip: m.error }];
      }
      const out: SagaNode[] = m.sortedEpics().map((epic) => ({ kind: 'epic', epic }) as SagaNode);
      for (const story of m.standaloneStories()) {
        out.push({ kind: 'story', story });
      }
      return out;
    }
    switch (node.kind) {
      case 'epic':
        return m.storiesOf(node.epic.id).map((story) => ({ kind: 'story', story }) as SagaNode);
      case 'story': {
        const story = m.stories.get(node.story.id) ?? node.story;
        return story.tasks.map((task) => ({ kind: 'task', story, task }) as SagaNode);
      }
      default:
        return [];
    }
  }

  getParent(node: SagaNode): SagaNode | undefined {
    if (node.kind === 'task') {
      return { kind: 'story', story: node.story };
    }
    if (node.kind === 'story' && node.story.epic) {
      const epic = this.model.epics.get(node.story.epic);
      return epic ? { kind: 'epic', epic } : undefined;
    }
    return undefined;
  }

  getTreeItem(node: SagaNode): vscode.TreeItem {
    switch (node.kind) {
      case 'message': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.tooltip = node.tooltip ?? node.text;
        item.iconPath = new vscode.ThemeIcon('info');
        return item;
      }
      case 'epic':
        return this.epicItem(node.epic);
      case 'story':
        return this.storyItem(this.model.stories.get(node.story.id) ?? node.story);
      case 'task':
        return this.taskItem(node.story, node.task);
    }
  }

  private epicItem(epic: EpicInfo): vscode.TreeItem {
    const stories = this.model.storiesOf(epic.id);
    const run = this.model.epicRuns.get(epic.id);
    const done = run?.total ? run.done : stories.filter((s) => s.status === 'completed').length;
    const total = run?.total ? run.total : stories.length;
    const epicRunning = run?.state === 'running';
    const running = epicRunning || stories.some((s) => s.worker.running);
    const status =
      total > 0 && done === total
        ? 'completed'
        : stories.some((s) => s.status !== 'pending')
          ? 'in_progress'
          : epic.status || 'pending';
    // The run's state once it has run (idle: never run).
    const ran = run && run.state !== 'idle' ? run.state : '';
    const state = epicRunning ? `running ▶${run?.running.length ?? 0}` : ran || (running ? 'running' : status);
    const item = new vscode.TreeItem(epic.id, vscode.TreeItemCollapsibleState.Expanded);
    item.id = `epic:${epic.id}`;
    item.description = `${done}/${total} stories · ${state}`;
    const lines = [`**${escapeMd(epic.title || epic.id)}** (epic \`${epic.id}\`)`, '', `${done}/${total} stories completed · status: ${status}`];
    if (run && ran) {
      lines.push(`run: ${ran}${run.session ? ` (\`${run.session}\`)` : ''}${run.cost ? ` · $${run.cost.toFixed(2)}` : ''}`);
      if (run.running.length) {
        lines.push(`running: ${run.running.map((s) => `\`${s}\``).join(', ')}`);
      }
    }
    item.tooltip = new vscode.MarkdownString(lines.join('  \n'));
    item.iconPath = running ? new vscode.ThemeIcon('sync~spin') : statusIcon(ran && ran !== 'completed' ? ran : status);
    item.contextValue = epicRunning ? 'saga.epic.running' : 'saga.epic';
    if (epic.file) {
      item.resourceUri = vscode.Uri.file(epic.file);
      item.command = { command: 'saga.openItem', title: 'Open', arguments: [epic.file] };
    }
    return item;
  }

  private storyItem(story: StoryInfo): vscode.TreeItem {
    const running = story.worker.running;
    const item = new vscode.TreeItem(story.id, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `story:${story.id}`;
    const ended = ['failed', 'stopped', 'blocked', 'timeout'].includes(story.worker.state) ? ` · last run ${story.worker.state}` : '';
    const epicRun = this.model.storyRun(story.id);
    const state = running
      ? `running${story.worker.cycle ? ` (run ${story.worker.cycle})` : ''}`
      : epicRun && this.model.epicRuns.get(story.epic)?.state !== 'idle'
        ? runState(epicRun)
        : story.status + ended;
    item.description = `${story.done}/${story.total} · ${state}`;
    const lines = [
      `**${escapeMd(story.title || story.id)}** (story \`${story.id}\`)`,
      '',
      `${story.done}/${story.total} tasks completed · status: ${story.status}`,
    ];
    if (story.epic) {
      lines.push(`epic: \`${story.epic}\``);
    }
    if (epicRun) {
      lines.push(`in the epic's run: ${runState(epicRun)}${epicRun.conflicts.length ? ` (conflicts in ${epicRun.conflicts.join(', ')})` : ''}`);
    }
    if (story.branch) {
      lines.push(`branch: \`${story.branch}\`${epicRun?.base ? ` (from \`${epicRun.base}\`)` : ''}`);
    }
    if (story.pr) {
      lines.push(`PR: ${story.pr}`);
    }
    if (epicRun?.actions) {
      const a = epicRun.actions;
      lines.push(`GitHub Actions: ${actionsState(a)}${a.url ? ` — ${a.url}` : ''}`);
      item.description += ' · GitHub Actions';
    }
    const w = story.worker;
    if (running) {
      lines.push(`worker: running (pid ${w.pid || '?'}, session \`${w.session}\`)`);
    } else if (w.state && w.state !== 'idle') {
      lines.push(`last run: ${w.state}${w.exitCode !== null && w.exitCode !== undefined ? ` (exit ${w.exitCode})` : ''}`);
    }
    item.tooltip = new vscode.MarkdownString(lines.join('  \n'));
    const shown = epicRun && epicRun.state !== 'completed' && this.model.epicRuns.get(story.epic)?.state !== 'idle' ? epicRun.state : story.status;
    item.iconPath = running ? new vscode.ThemeIcon('sync~spin', new vscode.ThemeColor('charts.blue')) : statusIcon(shown);
    item.contextValue = running ? 'saga.story.running' : 'saga.story';
    const file = this.model.storyFile(story.id);
    item.resourceUri = vscode.Uri.file(file);
    item.command = { command: 'saga.openItem', title: 'Open', arguments: [file] };
    return item;
  }

  private taskItem(story: StoryInfo, task: TaskInfo): vscode.TreeItem {
    const item = new vscode.TreeItem(task.id, vscode.TreeItemCollapsibleState.None);
    item.id = `task:${story.id}/${task.id}`;
    item.description = task.subject;
    const blockers = task.blockedBy?.length ? `  \nblocked by: ${task.blockedBy.map((b) => `\`${b}\``).join(', ')}` : '';
    item.tooltip = new vscode.MarkdownString(`**${escapeMd(task.subject || task.id)}**  \nstatus: ${task.status}${blockers}`);
    const live = this.model.stories.get(story.id)?.worker.running;
    item.iconPath = task.status === 'in_progress' && live ? new vscode.ThemeIcon('loading~spin') : statusIcon(task.status);
    item.contextValue = 'saga.task';
    const file = this.model.taskFile(story.id, task.id);
    item.resourceUri = vscode.Uri.file(file);
    item.command = { command: 'saga.openItem', title: 'Open', arguments: [file] };
    return item;
  }
}

export function statusIcon(status: string): vscode.ThemeIcon {
  switch (status) {
    case 'completed':
      return new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'));
    case 'in_progress':
      return new vscode.ThemeIcon('play-circle', new vscode.ThemeColor('charts.yellow'));
    case 'blocked':
      return new vscode.ThemeIcon('debug-pause', new vscode.ThemeColor('testing.iconFailed'));
    case 'failed':
    case 'died':
      return new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'));
    case 'held':
      return new vscode.ThemeIcon('lock', new vscode.ThemeColor('charts.purple'));
    case 'timeout':
      return new vscode.ThemeIcon('watch', new vscode.ThemeColor('testing.iconFailed'));
    case 'stopped':
      return new vscode.ThemeIcon('debug-stop');
    case 'ready':
      return new vscode.ThemeIcon('circle-large-outline', new vscode.ThemeColor('charts.blue'));
    case 'running':
      return new vscode.ThemeIcon('sync~spin', new vscode.ThemeColor('charts.blue'));
    default:
      return new vscode.ThemeIcon('circle-large-outline');
  }
}

/** A story's state in its epic's run, as the view words it. */
export function runState(r: EpicStoryRun): string {
  return r.state === 'held' && r.heldBy.length ? `held by ${r.heldBy.join(', ')}` : r.state;
}

function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}

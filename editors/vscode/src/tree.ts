// The SAGA view in the explorer: epics → stories → tasks, each with a status
// icon; stories and epics with a done/total description.

import * as vscode from 'vscode';
import { EpicInfo, SagaModel, StoryInfo, TaskInfo } from './model';

export type SagaNode =
  | { kind: 'epic'; epic: EpicInfo }
  | { kind: 'story'; story: StoryInfo }
  | { kind: 'task'; story: StoryInfo; task: TaskInfo }
  | { kind: 'message'; text: string; tooltip?: string };

export class SagaTree implements vscode.TreeDataProvider<SagaNode> {
  private readonly changed = new vscode.EventEmitter<SagaNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly model: SagaModel) {
    model.onDidChange(() => this.changed.fire());
  }

  getChildren(node?: SagaNode): SagaNode[] {
    const m = this.model;
    if (!node) {
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
    const done = stories.filter((s) => s.status === 'completed').length;
    const running = stories.some((s) => s.worker.running);
    const status =
      stories.length > 0 && done === stories.length
        ? 'completed'
        : stories.some((s) => s.status !== 'pending')
          ? 'in_progress'
          : epic.status || 'pending';
    const item = new vscode.TreeItem(epic.id, vscode.TreeItemCollapsibleState.Expanded);
    item.id = `epic:${epic.id}`;
    item.description = `${done}/${stories.length} stories · ${running ? 'running' : status}`;
    item.tooltip = new vscode.MarkdownString(
      `**${escapeMd(epic.title || epic.id)}** (epic \`${epic.id}\`)\n\n${done}/${stories.length} stories completed · status: ${status}`,
    );
    item.iconPath = running ? new vscode.ThemeIcon('sync~spin') : statusIcon(status);
    item.contextValue = 'saga.epic';
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
    const state = running ? `running${story.worker.cycle ? ` (run ${story.worker.cycle})` : ''}` : story.status + ended;
    item.description = `${story.done}/${story.total} · ${state}`;
    const lines = [
      `**${escapeMd(story.title || story.id)}** (story \`${story.id}\`)`,
      '',
      `${story.done}/${story.total} tasks completed · status: ${story.status}`,
    ];
    if (story.epic) {
      lines.push(`epic: \`${story.epic}\``);
    }
    if (story.branch) {
      lines.push(`branch: \`${story.branch}\``);
    }
    if (story.pr) {
      lines.push(`PR: ${story.pr}`);
    }
    const w = story.worker;
    if (running) {
      lines.push(`worker: running (pid ${w.pid || '?'}, session \`${w.session}\`)`);
    } else if (w.state && w.state !== 'idle') {
      lines.push(`last run: ${w.state}${w.exitCode !== null && w.exitCode !== undefined ? ` (exit ${w.exitCode})` : ''}`);
    }
    item.tooltip = new vscode.MarkdownString(lines.join('  \n'));
    item.iconPath = running ? new vscode.ThemeIcon('sync~spin', new vscode.ThemeColor('charts.blue')) : statusIcon(story.status);
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
      return new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'));
    default:
      return new vscode.ThemeIcon('circle-large-outline');
  }
}

function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}

// Which story or epic a command is about: from its argument (a SAGA view
// node, a `{story}`/`{epic}` object, an id, a file under .saga/), else the
// active editor's file, else a quick pick.

import * as path from 'path';
import * as vscode from 'vscode';
import { SagaModel, StoryInfo } from './model';
import { SagaNode } from './tree';

/**
 * The story named by a command argument: a tree node, a `{story}` object, a
 * story id, a file URI under .saga/stories/<story>/; else the active editor's.
 */
export function storyFromArg(arg: unknown, root: string, model: SagaModel): string | undefined {
  const node = arg as SagaNode | undefined;
  if (node && typeof node === 'object' && 'kind' in node) {
    if (node.kind === 'story' || node.kind === 'task') {
      return node.story.id;
    }
    return undefined;
  }
  if (typeof arg === 'string' && model.stories.has(arg)) {
    return arg;
  }
  if (arg && typeof arg === 'object' && typeof (arg as { story?: unknown }).story === 'string') {
    return (arg as { story: string }).story;
  }
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  if (uri?.scheme === 'file') {
    const rel = path.relative(path.join(root, '.saga', 'stories'), uri.fsPath);
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) {
      const id = rel.split(path.sep)[0];
      if (model.stories.has(id)) {
        return id;
      }
    }
  }
  return undefined;
}

export async function quickPickStory(model: SagaModel, placeHolder: string, only?: (s: StoryInfo) => boolean): Promise<string | undefined> {
  const all = [...model.stories.values()].sort((a, b) => a.id.localeCompare(b.id));
  const stories = only ? all.filter(only) : all;
  if (stories.length === 0) {
    void vscode.window.showInformationMessage('SAGA: no story fits.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    stories.map((s) => ({
      label: s.id,
      description: `${s.done}/${s.total} · ${s.worker.running ? 'running' : s.status}`,
      detail: s.title,
    })),
    { placeHolder, matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.label;
}

/** '' for no epic, undefined when cancelled. */
export async function quickPickEpic(model: SagaModel): Promise<string | undefined> {
  const epics = model.sortedEpics();
  if (epics.length === 0) {
    return '';
  }
  const picked = await vscode.window.showQuickPick(
    [{ label: '(no epic)', id: '' }, ...epics.map((e) => ({ label: e.id, description: e.title, id: e.id }))],
    { placeHolder: 'Epic of the new story' },
  );
  return picked?.id;
}

/**
 * The epic named by a command argument: an epic node, a `{epic}` object, an
 * epic id, an epic file; else the active editor's epic file. With
 * `orStory`, a story's epic counts too.
 */
export function epicFromArg(arg: unknown, root: string, model: SagaModel, orStory = false): string | undefined {
  const node = arg as SagaNode | undefined;
  if (node && typeof node === 'object' && 'kind' in node) {
    if (node.kind === 'epic') {
      return node.epic.id;
    }
    return orStory && (node.kind === 'story' || node.kind === 'task') ? node.story.epic || undefined : undefined;
  }
  if (typeof arg === 'string' && model.epics.has(arg)) {
    return arg;
  }
  if (arg && typeof arg === 'object' && typeof (arg as { epic?: unknown }).epic === 'string') {
    return (arg as { epic: string }).epic;
  }
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  if (uri?.scheme === 'file') {
    const file = uri.fsPath;
    for (const e of model.epics.values()) {
      if (e.file === file) {
        return e.id;
      }
    }
    if (orStory) {
      const story = storyFromArg(uri, root, model);
      return story ? model.stories.get(story)?.epic || undefined : undefined;
    }
  }
  return undefined;
}

/** An epic picked from a list; undefined when cancelled or there is none. */
export async function pickEpic(model: SagaModel, placeHolder: string, only?: (epic: string) => boolean): Promise<string | undefined> {
  const epics = model.sortedEpics().filter((e) => !only || only(e.id));
  if (epics.length === 0) {
    void vscode.window.showInformationMessage('SAGA: no epic fits.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    epics.map((e) => {
      const run = model.epicRuns.get(e.id);
      return { label: e.id, description: run ? `${run.done}/${run.total} stories · ${run.state}` : '', detail: e.title };
    }),
    { placeHolder, matchOnDetail: true },
  );
  return picked?.label;
}

// SAGA: Review story — the story branch's changes against its base in VS
// Code's multi-file diff (the "changes" editor: one diff per changed file),
// so the work can be read before the PR is opened. The server's reviewStory
// names the branch, the base and the changed files; both sides are read
// from git (`git show <ref>:<path>`) through a read-only document provider,
// so nothing is checked out and the git extension is not needed.
//
// A comment on a line of the branch's side (ReviewComments, VS Code's
// Comments API) becomes a review task of the story through the server's
// addReviewComment: a review without GitHub (docs/review.md).

import { execFile } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';

export const GIT_SCHEME = 'saga-git';

/** reviewStory's answer (docs/protocol-extensions.md). */
export interface Review {
  story: string;
  branch: string;
  base: string;
  /** The repository's top-level folder; `files` are relative to it. */
  repo?: string;
  worktree?: string;
  /** `git diff --name-status -M <base>...<branch>`: status added, modified, deleted, renamed, copied, typechange. */
  files: { path: string; status: string; oldPath?: string }[];
}

/**
 * saga-git:/<file>?<ref>#<repo> — a file as it is in a git ref of a
 * repository ('' when it is not there).
 */
export class GitFiles implements vscode.TextDocumentContentProvider {
  provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    return git(uri.fragment, ['show', `${uri.query}:${uri.path.slice(1)}`]).then((out) => out ?? '');
  }
}

function gitUri(repo: string, ref: string, file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: GIT_SCHEME, path: `/${file}`, query: ref, fragment: repo });
}

/**
 * Opens the review's changes. The left side is where the branch left its
 * base (the `base...branch` of the server's diff), the right the branch;
 * an added file's left side and a deleted file's right side are empty.
 */
export async function openReview(root: string, r: Review, log: vscode.LogOutputChannel): Promise<void> {
  if (r.files.length === 0) {
    void vscode.window.showInformationMessage(`SAGA: ${r.branch} has no changes against ${r.base}.`);
    return;
  }
  const repo = r.repo || root;
  const left = (await git(repo, ['merge-base', r.base, r.branch]))?.trim() || r.base;
  const title = `Review ${r.story}: ${r.branch} against ${r.base}`;
  const changes: [vscode.Uri, vscode.Uri, vscode.Uri][] = r.files.map((f) => [
    vscode.Uri.file(path.join(repo, f.path)),
    gitUri(repo, left, f.oldPath || f.path),
    gitUri(repo, r.branch, f.path),
  ]);
  log.info(`review ${r.story}: ${r.files.length} files, ${left.slice(0, 12)}..${r.branch}`);
  try {
    await vscode.commands.executeCommand('vscode.changes', title, changes);
  } catch (e) {
    // A VS Code without the multi-file diff: one diff editor per file.
    log.warn(`vscode.changes: ${e instanceof Error ? e.message : String(e)}; opening one diff per file`);
    for (const [file, a, b] of changes) {
      await vscode.commands.executeCommand('vscode.diff', a, b, `${path.basename(file.fsPath)} (${r.story})`, { preview: false });
    }
  }
}

function git(root: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd: root, maxBuffer: 64 * 1024 * 1024, timeout: 30_000 }, (err, stdout) => resolve(err ? undefined : stdout));
  });
}

/** The story/<s> branch prefix of a story's branch (runs.StoryBranchPrefix). */
const STORY_BRANCH = 'story/';

/** addReviewComment's answer (docs/protocol-extensions.md). */
export interface ReviewTask {
  task: string;
  file: string;
  root: string;
  created: boolean;
}

/**
 * Comments on the branch's side of a story review: each new thread's
 * comment is sent, with its file and line, as a review task of the story;
 * the thread then says which task it is.
 */
export class ReviewComments implements vscode.Disposable {
  readonly controller: vscode.CommentController;

  constructor(private readonly add: (arg: { story: string; path: string; line: number; body: string }) => Promise<ReviewTask | undefined>) {
    this.controller = vscode.comments.createCommentController('saga-review', 'SAGA review');
    this.controller.options = { prompt: 'A review request: it becomes a task of the story', placeHolder: 'What should change here?' };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (doc) => (storyOf(doc.uri) ? [new vscode.Range(0, 0, Math.max(doc.lineCount - 1, 0), 0)] : []),
    };
  }

  /** saga.addReviewComment's handler: the reply of a new thread. */
  async submit(reply: vscode.CommentReply): Promise<void> {
    const story = storyOf(reply.thread.uri);
    const body = reply.text.trim();
    if (!story || !body) {
      return;
    }
    const line = (reply.thread.range?.start.line ?? 0) + 1;
    const res = await this.add({ story, path: reply.thread.uri.path.slice(1), line, body });
    const said = (text: string, author: string): vscode.Comment => ({ body: text, mode: vscode.CommentMode.Preview, author: { name: author } });
    reply.thread.comments = [
      ...reply.thread.comments,
      said(body, 'you'),
      said(res ? `Review task \`${res.task}\` of ${story}${res.created ? '' : ' (already there)'}` : 'Not sent: see the SAGA output', 'SAGA'),
    ];
    reply.thread.canReply = false;
    reply.thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
  }

  dispose(): void {
    this.controller.dispose();
  }
}

/** The story whose branch a review document shows, or undefined (its base side, any other file). */
export function storyOf(uri: vscode.Uri): string | undefined {
  return uri.scheme === GIT_SCHEME && uri.query.startsWith(STORY_BRANCH) ? uri.query.slice(STORY_BRANCH.length) : undefined;
}

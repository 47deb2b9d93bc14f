// SAGA for VS Code: the saga-lsp language client, the SAGA view, worker and
// epic run status and output, the dependency graph, "needs you"
// notifications, story review, and palette commands that call the server's
// workspace/executeCommand commands.
//
// Command ids. The server registers its commands as `<prefix>runStory`, … and
// vscode-languageclient turns each into a VS Code command of that id. VS Code
// refuses a second registration of an id, so every window gets its own prefix
// ("saga.<random>."), and the extension's own palette commands (saga.runStory,
// …) are mapped onto the server's ids by their suffix.

import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Executable, ExecuteCommandRequest, LanguageClient, LanguageClientOptions, State } from 'vscode-languageclient/node';
import { registerDoctor } from './doctor';
import { EpicRuns } from './epics';
import { GraphKind, GraphPanels } from './graph';
import { EpicProgress, SagaModel, StoryInfo, TaskStatus, WorkerProgress } from './model';
import { NeedsYou } from './needsyou';
import { epicFromArg, pickEpic, quickPickEpic, quickPickStory, storyFromArg } from './picks';
import { GIT_SCHEME, GitFiles, openReview, Review, ReviewComments, ReviewTask } from './review';
import { missingMessage, offerSetup, resolveServer, ServerStatus } from './server';
import { SagaNode, SagaTree } from './tree';
import { Workers } from './workers';

const SERVER_COMMANDS = [
  'runStory',
  'stopStory',
  'runEpic',
  'stopEpic',
  'reviewStory',
  'addressReview',
  'addReviewComment',
  'createStory',
  'createTask',
  'createEpic',
  'showPlan',
  'showOutput',
  'openDashboard',
  'land',
  'resolveConflict',
] as const;
type ServerCommand = (typeof SERVER_COMMANDS)[number];

const PLAN_SCHEME = 'saga-plan';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const root = findRoot();
  void vscode.commands.executeCommand('setContext', 'saga.active', !!root);
  // The doctor answers in any workspace: it says what a first run lacks.
  registerDoctor(context, () => resolveServer(context.extensionPath).command, () => root ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  if (!root) {
    // onStartupFinished activates the extension in every trusted workspace
    // (docs/editors.md#vs-code): one without .saga/ gets the commands' hint
    // and nothing else — no output channel of its own.
    registerFallbackCommands(context);
    return;
  }
  const log = vscode.window.createOutputChannel('SAGA', { log: true });
  context.subscriptions.push(log);
  log.info(`workspace root: ${root}`);

  const serverPath = () => resolveServer(context.extensionPath).command;
  const status = new ServerStatus(log);
  context.subscriptions.push(status);
  const model = new SagaModel(root, serverPath, (m) => log.warn(m));
  const workers = new Workers(model);
  const epics = new EpicRuns(model, () => serverSessionDir(client));
  const graphs = new GraphPanels(context.extensionUri, model, (kind, id) => graphOf(kind, id), log);
  const tree = new SagaTree(model, () => status.state === 'missing');
  context.subscriptions.push(status.onDidChange(() => tree.refresh()));
  const view = vscode.window.createTreeView<SagaNode>('sagaView', { treeDataProvider: tree, showCollapseAll: true });
  const needsYou = new NeedsYou(model, context.workspaceState, log, {
    openJournal: (story) => openJournal(model, story),
    showOutput: (story) => workers.show(story),
  });
  context.subscriptions.push(model, workers, epics, graphs, view, needsYou);

  const updateBadge = () => {
    const n = model.runningStories().length;
    view.badge = n > 0 ? { value: n, tooltip: `${n} SAGA worker${n > 1 ? 's' : ''} running` } : undefined;
  };
  context.subscriptions.push(model.onDidChange(updateBadge));

  // Files under .saga/ (including the worktree copies running workers write).
  const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(root, '.saga/**'));
  watcher.onDidChange(() => model.scheduleRefresh());
  watcher.onDidCreate(() => model.scheduleRefresh());
  watcher.onDidDelete(() => model.scheduleRefresh());
  context.subscriptions.push(watcher);

  // Read-only plans.
  const plans = new PlanDocuments();
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(PLAN_SCHEME, plans));
  // Both sides of a story review, from git.
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(GIT_SCHEME, new GitFiles()));

  const prefix = `saga.${crypto.randomBytes(4).toString('hex')}.`;
  const dryRun = () => vscode.workspace.getConfiguration('saga').get<boolean>('dryRun', false);

  /** The server's id for one of its commands (by suffix; the prefix as a fallback). */
  const serverId = (name: ServerCommand): string => {
    const ids = client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    return ids.find((id) => id.endsWith(`.${name}`) || id === name) ?? prefix + name;
  };
  const nameOf = (id: string): ServerCommand | undefined =>
    SERVER_COMMANDS.find((n) => id === prefix + n || (id.startsWith('saga.') && id.endsWith(`.${n}`)));

  /** Adds what the settings ask for to the arguments of a server command. */
  const decorate = (name: ServerCommand | undefined, args: unknown[]): unknown[] => {
    const first = args[0];
    const story = typeof first === 'string' ? first : (first as { story?: string } | undefined)?.story;
    if (story && (name === 'runStory' || name === 'addressReview' || name === 'resolveConflict')) {
      workers.expect(story);
    }
    if (name !== 'runStory' && name !== 'runEpic') {
      return args;
    }
    if (!dryRun()) {
      return args;
    }
    if (typeof first === 'string') {
      return [{ [name === 'runStory' ? 'story' : 'epic']: first, dryRun: true }, ...args.slice(1)];
    }
    if (first && typeof first === 'object' && (first as { dryRun?: unknown }).dryRun === undefined) {
      return [{ ...(first as object), dryRun: true }, ...args.slice(1)];
    }
    return args;
  };

  /** What a server command answered: start following a worker, open created files, show a plan. */
  const afterCommand = async (name: ServerCommand | undefined, args: unknown[], result: unknown): Promise<void> => {
    const first = (typeof args[0] === 'string' ? { story: args[0] } : (args[0] ?? {})) as { story?: string; epic?: string; name?: string };
    const r = (result ?? {}) as Record<string, unknown>;
    switch (name) {
      case 'runStory':
      case 'addressReview':
      case 'resolveConflict': {
        // {story, session, outputFile, eventsFile, pid, attach, finished}
        const story = (r.story as string) || first.story;
        if (story) {
          workers.started(story, r.session as string | undefined, r.outputFile as string | undefined, r.finished === true);
        }
        model.scheduleRefresh(300);
        break;
      }
      case 'runEpic': {
        // {epic, session, outputFile, eventsFile, pid}
        const epic = (r.epic as string) || first.epic;
        if (epic) {
          log.info(`epic ${epic} started: ${String(r.session ?? '')}`);
          epics.started(epic, r.outputFile as string | undefined);
        }
        model.scheduleRefresh(200);
        break;
      }
      case 'stopStory':
      case 'stopEpic':
        model.scheduleRefresh(200);
        break;
      case 'land': {
        // land --format json's: {method, actions, stories: [{story, state, why?, next?}]}
        const stories = Array.isArray(r.stories) ? (r.stories as { story: string; state: string; why?: string }[]) : [];
        const landed = stories.filter((x) => x.state === 'landed').length;
        const others = stories.filter((x) => x.state !== 'landed').map((x) => `${x.story}: ${x.state}${x.why ? ` — ${x.why}` : ''}`);
        log.info(`land ${first.story ?? first.epic ?? first.name ?? ''}: ${JSON.stringify(r.actions ?? [])}`);
        void vscode.window.showInformationMessage(`SAGA: ${landed}/${stories.length} landed${others.length ? `; ${others.join('; ')}` : ''}`);
        model.scheduleRefresh(200);
        break;
      }
      case 'openDashboard':
        // {url, started}: the workspace's dashboard, served by the server;
        // the URL carries its access token.
        if (typeof r.url === 'string') {
          log.info(`dashboard ${r.started ? 'started' : 'running'}: ${r.url.replace(/token=.*/, 'token=…')}`);
          await vscode.env.openExternal(vscode.Uri.parse(r.url, true));
        }
        break;
      case 'reviewStory':
        // {story, branch, base, repo, worktree, files: [{path, status, oldPath?}]}
        if (r.branch && Array.isArray(r.files)) {
          await openReview(root, r as unknown as Review, log);
        }
        break;
      case 'createStory':
      case 'createTask':
      case 'createEpic': {
        // {created, updated, uri}; the server also asks (window/showDocument)
        // to show the new file: opening it again only focuses it.
        const created = (Array.isArray(r.created) ? r.created : []) as string[];
        const target = typeof r.uri === 'string' && r.uri ? vscode.Uri.parse(r.uri) : created[0] ? vscode.Uri.file(path.join(root, created[0])) : undefined;
        if (target) {
          await vscode.window.showTextDocument(target, { preview: false });
        }
        model.scheduleRefresh(200);
        break;
      }
      case 'showPlan': {
        const id = (r.name as string) ?? first.name ?? first.story ?? first.epic ?? 'plan';
        // A server that answers nothing: the CLI's text plan.
        const text = result === null || result === undefined ? await model.cli(['plan', id]).then((out) => out.stdout || out.stderr) : planText(result);
        await plans.show(id, text);
        break;
      }
    }
  };

  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', pattern: '**/.saga/**/*.json' }],
    outputChannelName: 'SAGA Language Server',
    initializationOptions: { sagaNotifications: true, commandPrefix: prefix },
    workspaceFolder: vscode.workspace.getWorkspaceFolder(vscode.Uri.file(root)),
    middleware: {
      // Code lenses (▶ Run story, ■ Stop) run server commands directly:
      // the settings (dryRun) are added here, and the answer followed.
      executeCommand: async (command, args, next) => {
        const name = nameOf(command);
        if (name === 'showOutput') {
          // The worker's log in its output channel, streaming; the server's
          // answer (the file opened as a document) only when we know of none.
          const story = storyFromArg(args[0], root, model);
          if (story && workers.outputFile(story)) {
            workers.show(story);
            return { story, outputFile: workers.outputFile(story), shown: true };
          }
        }
        const sent = decorate(name, args);
        try {
          const result = await next(command, sent);
          await afterCommand(name, sent, result);
          return result;
        } catch (e) {
          // A worker already running, tmux missing, …: the server says what to do.
          const msg = e instanceof Error ? e.message : String(e);
          log.error(msg);
          void vscode.window.showErrorMessage(`SAGA: ${msg}`);
          return undefined;
        }
      },
    },
  };
  const serverOptions: Executable = {
    command: serverPath(),
    args: ['serve'],
    options: { cwd: root },
  };

  client = new LanguageClient('saga', 'SAGA Language Server', serverOptions, clientOptions);
  context.subscriptions.push(
    client.onDidChangeState((e) => {
      const s = resolveServer(context.extensionPath);
      status.set(e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped', s);
    }),
    client.onNotification('saga/workerProgress', (p: WorkerProgress) => {
      const before = model.stories.get(p.story)?.worker.state;
      if (before !== p.state || p.step === 'end') {
        log.info(`saga/workerProgress ${p.story}: ${p.state} ${p.done ?? 0}/${p.total ?? 0}${p.step ? ` (${p.step})` : ''}`);
      }
      log.debug(`workerProgress ${JSON.stringify(p)}`);
      model.applyWorkerProgress(p);
      workers.onProgress(p);
      needsYou.onWorkerProgress(p);
    }),
    client.onNotification('saga/epicProgress', (p: EpicProgress) => {
      const list = (name: string, ids: string[] | undefined) => (ids?.length ? ` ${name} ${ids.join(',')}` : '');
      log.info(`saga/epicProgress ${p.epic}: ${p.state} ${p.done ?? 0}/${p.total ?? 0}${list('running', p.running)}${list('held', p.held)}${list('failed', p.failed)}`);
      model.applyEpicProgress(p);
      needsYou.onEpicProgress(p);
    }),
    client.onNotification('saga/taskStatus', (p: TaskStatus) => {
      log.info(`saga/taskStatus ${p.story}/${p.task}: ${p.from ?? '?'} → ${p.to} (${p.source ?? ''})`);
      model.applyTaskStatus(p);
    }),
  );

  /** The Mermaid graph of an epic or story: the server's showPlan, else `saga-lsp plan --format mermaid`. */
  const graphOf = async (kind: GraphKind, id: string): Promise<{ text: string; error?: string }> => {
    if (client?.state === State.Running) {
      try {
        const r = (await client.sendRequest(ExecuteCommandRequest.type, { command: serverId('showPlan'), arguments: [{ [kind]: id }] })) as
          | { mermaid?: unknown }
          | null;
        if (typeof r?.mermaid === 'string' && r.mermaid) {
          return { text: r.mermaid };
        }
      } catch (e) {
        log.warn(`showPlan ${kind} ${id}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const r = await model.cli(['plan', id, `--${kind}`, '--format', 'mermaid']);
    // Exit 1 still prints the graph (a cycle or a broken item is drawn).
    return r.stdout.startsWith('flowchart') ? { text: r.stdout } : { text: '', error: r.stderr.trim() || `saga-lsp plan exited ${r.code}` };
  };

  /** Calls a server command the way a code lens would. */
  const callServer = async (name: ServerCommand, arg: Record<string, unknown>): Promise<unknown> => {
    if (!client || client.state !== State.Running) {
      throw new Error('the SAGA language server is not running (see the "SAGA Language Server" output)');
    }
    const args = decorate(name, [arg]);
    const result = await client.sendRequest(ExecuteCommandRequest.type, { command: serverId(name), arguments: args });
    await afterCommand(name, args, result);
    return result;
  };

  // Comments on a story review's branch side become its review tasks.
  const reviewComments = new ReviewComments(async (arg) => {
    const res = (await callServer('addReviewComment', arg)) as ReviewTask | undefined;
    log.info(`addReviewComment ${arg.story} ${arg.path}:${arg.line}: ${res ? `${res.task}${res.created ? '' : ' (already there)'}` : 'no answer'}`);
    model.scheduleRefresh(200);
    return res;
  });
  context.subscriptions.push(reviewComments);

  const guarded =
    <A extends unknown[]>(f: (...a: A) => Promise<unknown>) =>
    async (...a: A) => {
      try {
        await f(...a);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        log.error(msg);
        void vscode.window.showErrorMessage(`SAGA: ${msg}`);
      }
    };

  const pickStory = (arg: unknown, placeHolder: string, only?: (s: StoryInfo) => boolean): Promise<string | undefined> =>
    storyFromArg(arg, root, model) !== undefined
      ? Promise.resolve(storyFromArg(arg, root, model))
      : quickPickStory(model, placeHolder, only);

  context.subscriptions.push(
    vscode.commands.registerCommand(
      'saga.runStory',
      guarded(async (arg?: unknown) => {
        const story = await pickStory(arg, 'Story to run', (s) => !s.worker.running && s.status !== 'completed');
        if (story) {
          await callServer('runStory', { story });
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.stopStory',
      guarded(async (arg?: unknown) => {
        const running = model.runningStories();
        const story =
          storyFromArg(arg, root, model) ??
          (running.length === 1 ? running[0].id : await quickPickStory(model, 'Story to stop', (s) => s.worker.running));
        if (story) {
          await callServer('stopStory', { story });
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.runEpic',
      guarded(async (arg?: unknown) => {
        const epic = epicFromArg(arg, root, model) ?? (await pickEpic(model, 'Epic to run', (e) => model.epicRuns.get(e)?.state !== 'running'));
        if (epic) {
          await callServer('runEpic', { epic });
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.stopEpic',
      guarded(async (arg?: unknown) => {
        const running = model.runningEpics();
        const epic =
          epicFromArg(arg, root, model) ??
          (running.length === 1 ? running[0].id : await pickEpic(model, 'Epic to stop', (e) => model.epicRuns.get(e)?.state === 'running'));
        if (epic) {
          await callServer('stopEpic', { epic });
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.showGraph',
      guarded(async (arg?: unknown) => {
        // An epic's graph; a story's own (its tasks) only when asked on a
        // standalone story.
        const epic = epicFromArg(arg, root, model, true);
        if (epic) {
          await graphs.show('epic', epic);
          return;
        }
        const story = storyFromArg(arg, root, model);
        if (story) {
          await graphs.show('story', story);
          return;
        }
        const picked = await pickEpic(model, 'Dependency graph of which epic?');
        if (picked) {
          await graphs.show('epic', picked);
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.reviewStory',
      guarded(async (arg?: unknown) => {
        const story = await pickStory(arg, "Review which story's changes?", (s) => !!s.branch || !!model.storyRun(s.id)?.branch);
        if (story) {
          await callServer('reviewStory', { story });
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.addressReview',
      guarded(async (arg?: unknown) => {
        const story = await pickStory(arg, "Address which story's review?", (s) => !!s.pr || !!model.storyRun(s.id)?.pr);
        if (story) {
          await callServer('addressReview', { story });
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.land',
      guarded(async (arg?: unknown) => {
        const node = arg as SagaNode | undefined;
        if (node?.kind === 'epic') {
          await callServer('land', { epic: node.epic.id });
          return;
        }
        const story = await pickStory(arg, 'Land which story?', (s) => !!s.pr || !!model.storyRun(s.id)?.pr);
        if (story) {
          await callServer('land', { story });
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.resolveConflict',
      guarded(async (arg?: unknown) => {
        const story = await pickStory(arg, "Resolve which story's conflict?", (s) => !!s.branch || !!model.storyRun(s.id)?.branch);
        if (story) {
          await callServer('resolveConflict', { story });
        }
      }),
    ),
    vscode.commands.registerCommand(
      'saga.addReviewComment',
      guarded(async (reply: vscode.CommentReply) => reviewComments.submit(reply)),
    ),
    vscode.commands.registerCommand(
      'saga.newStory',
      guarded(async (arg?: unknown) => {
        const epicArg = (arg as SagaNode | undefined)?.kind === 'epic' ? (arg as { epic: { id: string } }).epic.id : undefined;
        const epic = epicArg ?? (await quickPickEpic(model));
        if (epic === undefined) {
          return;
        }
        const name = await vscode.window.showInputBox({
          title: 'New story',
          prompt: epic ? `Story name (created as ${epic}--<name> in epic ${epic})` : 'Story name (a slug: lowercase letters, digits, hyphens)',
          validateInput: validateSlug,
        });
        if (!name) {
          return;
        }
        const title = await vscode.window.showInputBox({ title: 'New story', prompt: 'Title', validateInput: required });
        if (!title) {
          return;
        }
        const story = epic && !name.startsWith(`${epic}--`) ? `${epic}--${name}` : name;
        await callServer('createStory', { name: story, title, ...(epic ? { epic } : {}) });
      }),
    ),
    vscode.commands.registerCommand(
      'saga.newTask',
      guarded(async (arg?: unknown) => {
        const story = await pickStory(arg, 'Story of the new task');
        if (!story) {
          return;
        }
        const task = await vscode.window.showInputBox({
          title: `New task in ${story}`,
          prompt: 'Task id (a slug: lowercase letters, digits, hyphens)',
          validateInput: validateSlug,
        });
        if (!task) {
          return;
        }
        const subject = await vscode.window.showInputBox({ title: `New task in ${story}`, prompt: 'Subject', validateInput: required });
        if (!subject) {
          return;
        }
        await callServer('createTask', { story, id: task, subject });
      }),
    ),
    vscode.commands.registerCommand(
      'saga.newEpic',
      guarded(async () => {
        const epic = await vscode.window.showInputBox({ title: 'New epic', prompt: 'Epic id (a slug)', validateInput: validateSlug });
        if (!epic) {
          return;
        }
        const title = await vscode.window.showInputBox({ title: 'New epic', prompt: 'Title', validateInput: required });
        if (!title) {
          return;
        }
        await callServer('createEpic', { id: epic, title });
      }),
    ),
    vscode.commands.registerCommand(
      'saga.showPlan',
      guarded(async (arg?: unknown) => {
        let id: string | undefined;
        let isEpic = false;
        const node = arg as SagaNode | undefined;
        if (node?.kind === 'epic') {
          id = node.epic.id;
          isEpic = true;
        } else {
          id = storyFromArg(arg, root, model);
        }
        if (!id) {
          const items: (vscode.QuickPickItem & { id: string; epic: boolean })[] = [
            ...model.sortedEpics().map((e) => ({ label: e.id, description: `epic · ${e.title}`, id: e.id, epic: true })),
            ...[...model.stories.values()].map((s) => ({ label: s.id, description: `${s.done}/${s.total} · ${s.title}`, id: s.id, epic: false })),
          ];
          const picked = await vscode.window.showQuickPick(items, { placeHolder: 'Plan of which story or epic?' });
          if (!picked) {
            return;
          }
          id = picked.id;
          isEpic = picked.epic;
        }
        await callServer('showPlan', isEpic ? { epic: id } : { story: id });
      }),
    ),
    vscode.commands.registerCommand('saga.showOutput', (arg?: unknown, file?: unknown) => {
      if ((arg as SagaNode | undefined)?.kind === 'epic') {
        epics.show((arg as { epic: { id: string } }).epic.id);
        return;
      }
      const a = arg as { story?: string; outputFile?: string } | string | undefined;
      const story = storyFromArg(arg, root, model) ?? (typeof a === 'object' ? a?.story : undefined);
      const outputFile = typeof file === 'string' ? file : typeof a === 'object' ? a?.outputFile : undefined;
      if (story) {
        workers.show(story, outputFile);
        return;
      }
      void quickPickStory(model, 'Output of which story?', (s) => !!s.worker.outputFile).then((s) => s && workers.show(s));
    }),
    vscode.commands.registerCommand(
      'saga.openDashboard',
      guarded(async () => {
        await callServer('openDashboard', {});
      }),
    ),
    vscode.commands.registerCommand('saga.refresh', () => model.refresh()),
    vscode.commands.registerCommand(
      'saga.restartServer',
      guarded(async () => {
        model.scheduleRefresh(0);
        await startServer('restart');
      }),
    ),
    vscode.commands.registerCommand('saga.setupServer', () => offerSetup(missingMessage(resolveServer(context.extensionPath)))),
    vscode.commands.registerCommand('saga.showServerLog', () => client?.outputChannel.show(true)),
    vscode.commands.registerCommand('saga.openItem', async (file: string) => {
      await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('saga.dryRun')) {
        log.info(`settings: saga.dryRun ${dryRun()}`);
      }
      if (e.affectsConfiguration('saga.serverPath')) {
        model.scheduleRefresh(0);
        void startServer('settings');
      }
    }),
  );

  void model.refresh();

  /**
   * Starts the server: at activation, after saga.serverPath changed (a
   * restart when it names another binary), or on Restart language server.
   */
  let reported = '';
  const startServer = async (why: 'activation' | 'settings' | 'restart'): Promise<void> => {
    const server = resolveServer(context.extensionPath);
    const cmd = server.command;
    if (!server.found) {
      // Never VS Code's bare "spawn saga-lsp ENOENT": the view's welcome
      // content, the status item, and one notification say what to do.
      const msg = missingMessage(server);
      log.error(`${msg} PATH=${process.env.PATH ?? ''}`);
      if (client && (client.state === State.Running || client.state === State.Starting)) {
        await client.stop().catch(() => undefined);
      }
      status.set('missing', server);
      if (reported !== cmd || why === 'restart') {
        reported = cmd;
        void offerSetup(msg);
      }
      return;
    }
    reported = '';
    if (!client) {
      return;
    }
    try {
      if (client.state === State.Running || client.state === State.Starting) {
        if (why === 'activation' || (why === 'settings' && serverOptions.command === cmd)) {
          return;
        }
        serverOptions.command = cmd;
        log.info(`restarting saga-lsp: ${cmd}`);
        await client.restart();
      } else {
        serverOptions.command = cmd;
        status.set('starting', server);
        await client.start();
      }
      log.info(`saga-lsp started (${server.source}: ${cmd}); server commands: ${(client.initializeResult?.capabilities.executeCommandProvider?.commands ?? []).join(', ')}`);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      status.set('failed', server, msg);
      log.error(`saga-lsp did not start: ${msg}`);
    }
  };
  await startServer('activation');
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
    client = undefined;
  }
}

/** Opens the story's live journal (the worktree copy's while there is one). */
async function openJournal(model: SagaModel, story: string): Promise<void> {
  const journal = model.journalFile(story);
  if (journal) {
    await vscode.window.showTextDocument(vscode.Uri.file(journal), { preview: false });
    return;
  }
  void vscode.window.showInformationMessage(`SAGA: ${story} has no journal yet; its story.json is open.`);
  await vscode.window.showTextDocument(vscode.Uri.file(model.storyFile(story)), { preview: false });
}

/** The first workspace folder with a .saga/ at or above it. */
function findRoot(): string | undefined {
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    if (f.uri.scheme !== 'file') {
      continue;
    }
    let dir = f.uri.fsPath;
    for (;;) {
      if (fs.existsSync(path.join(dir, '.saga'))) {
        return dir;
      }
      const up = path.dirname(dir);
      if (up === dir) {
        break;
      }
      dir = up;
    }
  }
  return undefined;
}

/** Without a .saga/ the commands still answer, with a hint. */
function registerFallbackCommands(context: vscode.ExtensionContext): void {
  const hint = () =>
    void vscode.window.showInformationMessage('SAGA: this workspace has no .saga/ folder. Create one with `saga-lsp new epic|story …`, then reload the window.');
  for (const id of ['runStory', 'stopStory', 'runEpic', 'stopEpic', 'showGraph', 'reviewStory', 'addressReview', 'land', 'resolveConflict', 'newStory', 'newTask', 'newEpic', 'showPlan', 'showOutput', 'openDashboard', 'refresh', 'restartServer', 'setupServer', 'showServerLog']) {
    context.subscriptions.push(vscode.commands.registerCommand(`saga.${id}`, hint));
  }
  context.subscriptions.push(vscode.commands.registerCommand('saga.openItem', () => undefined));
}

function validateSlug(v: string): string | undefined {
  return /^[a-z0-9]+(?:-{1,2}[a-z0-9]+)*$/.test(v) ? undefined : 'lowercase letters, digits and hyphens, e.g. add-login-form';
}

function required(v: string): string | undefined {
  return v.trim() ? undefined : 'required';
}

/** The text of a showPlan answer: a string, `{text}`, or the plan JSON. */
function planText(result: unknown): string {
  if (typeof result === 'string') {
    return result;
  }
  const r = result as { text?: unknown; plan?: unknown } | null | undefined;
  if (r && typeof r.text === 'string') {
    return r.text;
  }
  return JSON.stringify(r?.plan ?? result ?? null, null, 2);
}

/** saga-plan:/<id>.plan — read-only documents with a plan's text. */
class PlanDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  async show(id: string, text: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: PLAN_SCHEME, path: `/${id}.plan` });
    this.texts.set(uri.path, text);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }
}

/** The session dir the server named in its initialize result (docs/protocol-extensions.md). */
function serverSessionDir(c: LanguageClient | undefined): string | undefined {
  const experimental = c?.initializeResult?.capabilities.experimental as { saga?: { sessionDir?: unknown } } | undefined;
  const dir = experimental?.saga?.sessionDir;
  return typeof dir === 'string' && dir !== '' ? dir : undefined;
}

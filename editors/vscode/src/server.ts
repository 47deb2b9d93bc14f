// Which saga-lsp the extension runs, and what the user sees of it: the
// language status item (the server's state, beside the JSON language in the
// status bar) and, when there is none, the SAGA view's welcome content and one
// notification with the ways out.
//
// The binary: saga.serverPath (the user's machine setting) if set, else the
// one bundled in a per-platform .vsix (server/saga-lsp[.exe], put there by
// scripts/package-target.sh), else `saga-lsp` on PATH.

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

export const INSTALL_URL = 'https://github.com/saga-ai/saga-lsp#install';

export type ServerSource = 'setting' | 'bundled' | 'PATH';

export interface Server {
  /** What to execute: an absolute path, or `saga-lsp` to look up on PATH. */
  command: string;
  source: ServerSource;
  /** Whether it exists (for PATH: whether PATH has it). */
  found: boolean;
}

/**
 * saga.serverPath as the user set it. It names a program to run, so only the
 * user's (or remote) settings count, never a workspace's or folder's: its
 * scope is `machine` (package.json), and it is read so here as well.
 */
export function configuredServerPath(): string {
  return (vscode.workspace.getConfiguration('saga').inspect<string>('serverPath')?.globalValue ?? '').trim();
}

/** The server binary shipped inside this extension, if this .vsix has one. */
export function bundledServer(extensionPath: string): string | undefined {
  const file = path.join(extensionPath, 'server', process.platform === 'win32' ? 'saga-lsp.exe' : 'saga-lsp');
  if (!fs.existsSync(file)) {
    return undefined;
  }
  if (process.platform !== 'win32') {
    // A .vsix unpacked by a tool that drops the mode bits: make it runnable.
    try {
      fs.accessSync(file, fs.constants.X_OK);
    } catch {
      try {
        fs.chmodSync(file, 0o755);
      } catch {
        return undefined;
      }
    }
  }
  return file;
}

/** The server to run: the setting, else the bundled binary, else PATH's. */
export function resolveServer(extensionPath: string): Server {
  const configured = configuredServerPath();
  if (configured) {
    const command = configured.startsWith('~/') ? path.join(process.env.HOME ?? '', configured.slice(2)) : configured;
    return { command, source: 'setting', found: onPath(command) };
  }
  const bundled = bundledServer(extensionPath);
  if (bundled) {
    return { command: bundled, source: 'bundled', found: true };
  }
  return { command: 'saga-lsp', source: 'PATH', found: onPath('saga-lsp') };
}

function onPath(cmd: string): boolean {
  if (cmd.includes('/') || cmd.includes(path.sep)) {
    return fs.existsSync(cmd);
  }
  const exts = process.platform === 'win32' ? ['', '.exe', '.cmd', '.bat'] : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && exts.some((e) => fs.existsSync(path.join(dir, cmd + e)))) {
      return true;
    }
  }
  return false;
}

/** Why no server runs, in words and with what to do. */
export function missingMessage(s: Server): string {
  const where =
    s.source === 'setting'
      ? `saga.serverPath names ${s.command}, which does not exist`
      : 'this build of the extension carries no saga-lsp for this platform, and PATH has none';
  return `saga-lsp not found: ${where}. Install saga-lsp (a release archive, or \`go install github.com/saga-ai/saga-lsp/cmd/saga-lsp@latest\`), or set saga.serverPath in your user settings.`;
}

export type ServerState = 'starting' | 'running' | 'stopped' | 'missing' | 'failed';

/**
 * The server's state where VS Code shows a language's status: in the status
 * bar's `{}` item of a JSON file, and in the SAGA view's welcome content (the
 * `saga.serverMissing` context) when there is no server.
 */
export class ServerStatus implements vscode.Disposable {
  private readonly item: vscode.LanguageStatusItem;
  private readonly changed = new vscode.EventEmitter<ServerState>();
  readonly onDidChange = this.changed.event;
  state: ServerState = 'starting';

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.item = vscode.languages.createLanguageStatusItem('saga.server', [
      { language: 'json', pattern: '**/.saga/**' },
      { language: 'jsonc', pattern: '**/.saga/**' },
    ]);
    this.item.name = 'saga-lsp';
  }

  dispose(): void {
    this.item.dispose();
    this.changed.dispose();
  }

  set(state: ServerState, s: Server, detail = ''): void {
    const before = this.state;
    this.state = state;
    void vscode.commands.executeCommand('setContext', 'saga.serverMissing', state === 'missing');
    const where = s.source === 'bundled' ? 'bundled' : s.source === 'setting' ? 'saga.serverPath' : 'PATH';
    this.item.busy = state === 'starting';
    this.item.severity =
      state === 'missing' || state === 'failed'
        ? vscode.LanguageStatusSeverity.Error
        : state === 'stopped'
          ? vscode.LanguageStatusSeverity.Warning
          : vscode.LanguageStatusSeverity.Information;
    this.item.text = state === 'missing' ? 'saga-lsp not found' : `saga-lsp ${state}`;
    this.item.detail = detail || (state === 'missing' ? 'set saga.serverPath or install saga-lsp' : `${where}: ${s.command}`);
    this.item.command =
      state === 'missing'
        ? { title: 'Set up', command: 'saga.setupServer' }
        : state === 'running'
          ? { title: 'Restart', command: 'saga.restartServer' }
          : { title: 'Show log', command: 'saga.showServerLog' };
    this.log.info(`server: ${state} (${where}: ${s.command})${detail ? ` ${detail}` : ''}`);
    if (state !== before) {
      this.changed.fire(state);
    }
  }
}

/** The actions offered when no server is found (the notification's and saga.setupServer's). */
export async function offerSetup(msg: string): Promise<void> {
  const settings = 'Open settings';
  const install = 'How to install';
  const picked = await vscode.window.showErrorMessage(`SAGA: ${msg}`, settings, install);
  if (picked === settings) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'saga.serverPath');
  } else if (picked === install) {
    await vscode.env.openExternal(vscode.Uri.parse(INSTALL_URL));
  }
}

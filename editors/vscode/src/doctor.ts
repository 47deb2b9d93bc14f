// "SAGA: Doctor": what a run needs, as `saga-lsp doctor --format json`
// checks it — the same checks as `run`'s preflight and Neovim's
// `:checkhealth saga` (docs/commands.md#doctor). The report is shown in an
// output channel, one line a check with its fix, and summed up in a
// notification.

import { execFile } from 'child_process';
import * as vscode from 'vscode';

/** One check of saga-lsp doctor's report (runs/doctor's Check). */
export interface DoctorCheck {
  name: string;
  level: 'ok' | 'warning' | 'error' | 'unchecked';
  detail: string;
  fix?: string;
}

/** saga-lsp doctor's report (runs/doctor's Report). */
export interface DoctorReport {
  on: string;
  checks: DoctorCheck[];
  errors: number;
  warnings: number;
}

/**
 * Runs `saga-lsp doctor --format json` in dir. Its exit code is 1 when a
 * check is an error; the report is on stdout either way. Every probe of the
 * doctor is bounded; the timeout here only guards against a broken binary.
 */
export function runDoctor(server: string, dir: string | undefined): Promise<DoctorReport> {
  return new Promise((resolve, reject) => {
    execFile(server, ['doctor', '--format', 'json'], { cwd: dir, timeout: 120_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      try {
        const rep = JSON.parse(stdout) as DoctorReport;
        if (!Array.isArray(rep.checks)) {
          throw new Error('no checks');
        }
        resolve(rep);
      } catch {
        const why = (stderr || err?.message || 'no output').trim();
        reject(new Error(`\`${server} doctor --format json\` gave no report (${why}); an older saga-lsp has no doctor: update it`));
      }
    });
  });
}

const MARKS: Record<DoctorCheck['level'], string> = { ok: 'ok', warning: 'warning', error: 'ERROR', unchecked: 'not checked' };

/** The report as text: one line a check, its fix under it, a verdict. */
export function doctorText(rep: DoctorReport): string[] {
  const where = rep.on === 'github' ? 'on GitHub Actions' : 'on this machine (tmux)';
  const lines = [`What a run of stories ${where} needs (saga-lsp doctor):`];
  for (const c of rep.checks) {
    lines.push(`  ${MARKS[c.level].padEnd(11)} ${c.name.padEnd(12)} ${c.detail}`);
    if (c.fix) {
      lines.push(`  ${''.padEnd(11)} ${''.padEnd(12)} → ${c.fix}`);
    }
  }
  lines.push(doctorVerdict(rep));
  return lines;
}

/** One sentence for the notification. */
export function doctorVerdict(rep: DoctorReport): string {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  if (rep.errors > 0) {
    return `${n(rep.errors, 'error')}, ${n(rep.warnings, 'warning')}: a run refuses to start or cannot do its work until the errors are fixed`;
  }
  if (rep.warnings > 0) {
    return `${n(rep.warnings, 'warning')}: a run works, with what the warnings say it lacks`;
  }
  return 'Everything a run needs is here.';
}

/** Registers saga.doctor: server names the saga-lsp to run, dir where. */
export function registerDoctor(context: vscode.ExtensionContext, server: () => string, dir: () => string | undefined): void {
  const channel = vscode.window.createOutputChannel('SAGA Doctor');
  context.subscriptions.push(
    channel,
    vscode.commands.registerCommand('saga.doctor', async () => {
      let rep: DoctorReport;
      try {
        rep = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'SAGA: checking what a run needs…' },
          () => runDoctor(server(), dir()),
        );
      } catch (e) {
        void vscode.window.showErrorMessage(`SAGA Doctor: ${(e as Error).message}`);
        return;
      }
      channel.clear();
      for (const line of doctorText(rep)) {
        channel.appendLine(line);
      }
      channel.show(true);
      const msg = `SAGA Doctor: ${doctorVerdict(rep)}`;
      if (rep.errors > 0) {
        void vscode.window.showErrorMessage(msg);
      } else if (rep.warnings > 0) {
        void vscode.window.showWarningMessage(msg);
      } else {
        void vscode.window.showInformationMessage(msg);
      }
    }),
  );
}

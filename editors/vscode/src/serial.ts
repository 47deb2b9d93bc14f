// One run of an async job at a time: asking while it runs makes one more run
// after it (every ask in between folds into that one), so the last state is
// always what was read last.

export class Serial {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(private readonly job: () => Promise<void>) {}

  /** Runs the job, or once more after the running one; resolves when the run it joined ends. */
  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.job().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.run();
      }
    });
    return this.running;
  }
}

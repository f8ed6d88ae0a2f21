import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { lowerProcessPriority } from '../../src/threads/thread.js';
import { nicenessOfThreads } from '../helpers/niceness.js';

/** A node process with a worker thread of its own; it says READY once the worker runs. */
async function processWithThreads(): Promise<ChildProcess> {
  const script = `
    const { Worker } = require('node:worker_threads');
    const w = new Worker('setInterval(() => {}, 1000); require("node:worker_threads").parentPort.postMessage(1)', { eval: true });
    w.once('message', () => console.log('READY'));
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('READY')) resolve();
    });
    child.once('exit', () => reject(new Error('the child exited early')));
  });
  return child;
}

describe('lowering the priority of another process', () => {
  it('gives every thread it has the nice value, and leaves other processes alone', async () => {
    const lowered = await processWithThreads();
    const other = await processWithThreads();
    try {
      const before = nicenessOfThreads(lowered.pid!);
      const othersBefore = nicenessOfThreads(other.pid!);
      expect(before.length).to.be.above(2);
      expect(before).to.not.include(6);
      lowerProcessPriority(lowered.pid!, 6);
      expect(new Set(nicenessOfThreads(lowered.pid!))).to.deep.equal(new Set([6]));
      expect(nicenessOfThreads(other.pid!)).to.deep.equal(othersBefore);
    } finally {
      lowered.kill('SIGKILL');
      other.kill('SIGKILL');
    }
  });

  it('does nothing, and throws nothing, for a process that is gone', async () => {
    const gone = await processWithThreads();
    const pid = gone.pid!;
    const exited = new Promise((resolve) => gone.once('exit', resolve));
    gone.kill('SIGKILL');
    await exited;
    expect(() => lowerProcessPriority(pid, 6)).to.not.throw();
  });
});

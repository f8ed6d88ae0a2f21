import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { lowerProcessPriority } from '../../src/threads/thread.js';

/** The nice value of each thread of process `pid` (Linux: field 19 of each task's stat). */
function niceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return [];
    }
  });
}

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
      const before = niceness(lowered.pid!);
      const othersBefore = niceness(other.pid!);
      expect(before.length).to.be.above(2);
      expect(before).to.not.include(6);
      lowerProcessPriority(lowered.pid!, 6);
      expect(new Set(niceness(lowered.pid!))).to.deep.equal(new Set([6]));
      expect(niceness(other.pid!)).to.deep.equal(othersBefore);
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

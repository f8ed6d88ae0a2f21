import { readdirSync, readFileSync } from 'node:fs';

/** The nice value of every thread of process `pid` (Linux: field 19 of each task's stat). */
export function nicenessOfThreads(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

/**
 * Where a CPU profile's time went: the functions with the most self time, and the modules
 * (source files, packages, or V8's own buckets such as the garbage collector and idle time) with
 * the most, as shares of the profile's busy time.
 *
 * Then the stalls: runs of consecutive busy samples (no idle time between them) longer than
 * `stall` ms, each with the functions that took most of it and the project functions it ran
 * under, which is where a long event-loop delay comes from. The sampling interval bounds what can
 * be seen (Node samples every ~1 ms by default; `--cpu-prof-interval` in µs changes it).
 *
 * A sampling heap profile (`--heap-prof`, `.heapprofile`) is summarised as the bytes allocated by
 * module and by function instead.
 *
 * With `from` and `to` (seconds into the profile), only that stretch counts; the busy share of
 * each second is printed first, to find the stretch of interest.
 *
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile> [top=40] [stall=10] [from] [to]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  parent?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg, stallArg, fromArg, toArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: profile-summary <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 40);
const stallMs = Number(stallArg ?? 10);
const fromUs = Number(fromArg ?? 0) * 1e6;
const toUs = toArg === undefined ? Infinity : Number(toArg) * 1e6;
const parsed = JSON.parse(readFileSync(file, 'utf8')) as Profile | HeapProfile;
if ('head' in parsed) {
  summariseAllocations(parsed);
  process.exit(0);
}
const profile = parsed;
interface HeapNode {
  callFrame: ProfileNode['callFrame'];
  selfSize: number;
  children: HeapNode[];
}

interface HeapProfile {
  head: HeapNode;
}

/** A sampling heap profile (--heap-prof): bytes allocated, by module and by function. */
function summariseAllocations(heap: HeapProfile): void {
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const visit = (node: HeapNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    if (node.selfSize > 0) {
      const mod = moduleOf(url, functionName);
      const fn = `${functionName || '(anonymous)'} ${mod}${url ? `:${lineNumber + 1}` : ''}`;
      byModule.set(mod, (byModule.get(mod) ?? 0) + node.selfSize);
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) visit(child);
  };
  visit(heap.head);
  process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} MB allocated (sampled)\n`);
  for (const [title, entries] of [
    ['allocated by module', byModule],
    ['allocated by function', byFunction],
  ] as const) {
    process.stdout.write(`\n${title}\n`);
    for (const [name, bytes] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(
        `${((100 * bytes) / total).toFixed(1).padStart(5)}% ${(bytes / 1e6).toFixed(1).padStart(8)} MB  ${name}\n`,
      );
    }
  }
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
for (const n of profile.nodes) for (const c of n.children ?? []) byId.get(c)!.parent = n.id;

/** When each sample was taken, µs from the start of the profile. */
const at: number[] = [];
{
  let clock = 0;
  for (const delta of profile.timeDeltas) at.push((clock += delta));
}
const inWindow = (i: number): boolean => at[i]! >= fromUs && at[i]! < toUs;

const selfUs = new Map<number, number>();
const seconds: { busy: number; all: number }[] = [];
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  const second = (seconds[Math.floor(at[i]! / 1e6)] ??= { busy: 0, all: 0 });
  second.all += delta;
  if (byId.get(id)!.callFrame.functionName !== '(idle)') second.busy += delta;
  if (inWindow(i)) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
});
process.stdout.write(
  `busy share per second: ${seconds.map((s, i) => `${i}:${s ? Math.round((100 * s.busy) / s.all) : 0}`).join(' ')}\n`,
);

/** A short module name: the package under node_modules, the project file, or V8's bucket. */
function moduleOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url;
  const project = /\/(src|dist\/src)\/(.*)$/.exec(url);
  return project ? `src/${project[2]!.replace(/\.js$/, '.ts')}` : url;
}

const label = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${moduleOf(url, functionName)}${url ? `:${lineNumber + 1}` : ''}`;
};

const byFunction = new Map<string, number>();
const byModule = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [id, us] of selfUs) {
  const node = byId.get(id)!;
  const { functionName, url, lineNumber } = node.callFrame;
  total += us;
  if (functionName === '(idle)') {
    idle += us;
    continue;
  }
  const mod = moduleOf(url, functionName);
  const fn = label(node);
  void lineNumber;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  byModule.set(mod, (byModule.get(mod) ?? 0) + us);
}
const busy = total - idle;
const pct = (us: number): string => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
const print = (title: string, entries: Map<string, number>): void => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${pct(us)} ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}\n`);
  }
};
process.stdout.write(
  `${file}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${((100 * busy) / total).toFixed(0)}%)\n`,
);
print('self time by module (share of busy time)', byModule);
print('self time by function', byFunction);

/** The project frames a sample ran under, outermost first. */
function projectFrames(id: number): string[] {
  const frames: string[] = [];
  for (let node = byId.get(id); node; node = node.parent === undefined ? undefined : byId.get(node.parent)) {
    if (/\/(src|dist\/src)\//.test(node.callFrame.url)) frames.push(label(node));
  }
  return frames.reverse();
}

interface Stall {
  atMs: number;
  ms: number;
  self: Map<string, number>;
  under: Map<string, number>;
}
const stalls: Stall[] = [];
let current: Stall | undefined;
let clock = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  clock += delta;
  if (!inWindow(i)) return;
  const node = byId.get(id)!;
  if (node.callFrame.functionName === '(idle)') {
    if (current && current.ms >= stallMs) stalls.push(current);
    current = undefined;
    return;
  }
  current ??= { atMs: clock / 1000, ms: 0, self: new Map(), under: new Map() };
  current.ms += delta / 1000;
  const fn = label(node);
  current.self.set(fn, (current.self.get(fn) ?? 0) + delta / 1000);
  const outer = projectFrames(id).slice(0, 3).join(' > ') || '(no project frame)';
  current.under.set(outer, (current.under.get(outer) ?? 0) + delta / 1000);
});
if (current && current.ms >= stallMs) stalls.push(current);
process.stdout.write(`\nstalls of ${stallMs} ms or more: ${stalls.length}\n`);
const topOf = (m: Map<string, number>, n: number): string =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, ms]) => `${ms.toFixed(1)} ms ${name}`)
    .join('\n      ');
for (const stall of [...stalls].sort((a, b) => b.ms - a.ms).slice(0, top)) {
  process.stdout.write(
    `  ${stall.ms.toFixed(1)} ms at ${(stall.atMs / 1000).toFixed(2)} s\n    self:\n      ${topOf(stall.self, 4)}\n    under:\n      ${topOf(stall.under, 4)}\n`,
  );
}

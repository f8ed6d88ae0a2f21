import { expect } from 'chai';
import { LoopDelay } from '../../src/pacing/loop-delay.js';
import { MIN_DUTY, Pacer, PACING_TICK_MS } from '../../src/pacing/pacer.js';

/** A pacer on a clock of its own: steps take what the test says, pauses are only noted. */
function pacerOnClock(enabled = true) {
  let now = 0;
  const pauses: number[] = [];
  const observed: { duty: number[]; paused: [number, string][] } = { duty: [], paused: [] };
  const pacer = new Pacer({
    enabled,
    delayMs: 10,
    now: () => now,
    sleep: async (ms) => {
      pauses.push(ms);
      now += ms;
    },
    observe: {
      duty: (d) => observed.duty.push(d),
      paused: (ms, work) => observed.paused.push([ms, work]),
    },
  });
  const taking = (ms: number) => async (): Promise<string> => {
    now += ms;
    return 'done';
  };
  const advance = (ms: number): void => {
    now += ms;
  };
  return { pacer, pauses, observed, taking, advance };
}

describe('pacing of background work', () => {
  it('runs at full speed while no serving process is held up', async () => {
    const { pacer, pauses, taking } = pacerOnClock();
    pacer.report('slot 1', 3);
    pacer.tick();
    expect(pacer.duty).to.equal(1);
    expect(await pacer.step('scim.sync', taking(100))).to.equal('done');
    expect(pauses).to.deep.equal([]);
  });

  it('starts work small after a pause and doubles its steps while they go by calmly', async () => {
    const { pacer, taking, advance } = pacerOnClock();
    const sizes: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      sizes.push(pacer.size(1000, 50));
      await pacer.step('scim.sync', taking(10));
    }
    expect(sizes).to.deep.equal([100, 200, 400, 800, 1000, 1000]);
    // A second after its last step, work starts small again.
    advance(1_500);
    expect(pacer.size(1000, 50)).to.equal(100);
  });

  it('halves its share of time at each tick a serving process is held up, down to the floor', () => {
    const { pacer, observed } = pacerOnClock();
    const duties: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      pacer.report('slot 2', 40);
      pacer.tick();
      duties.push(pacer.duty);
    }
    expect(duties.slice(0, 4)).to.deep.equal([0.5, 0.25, 0.125, 0.0625]);
    expect(duties.slice(4)).to.deep.equal([MIN_DUTY, MIN_DUTY, MIN_DUTY, MIN_DUTY]);
    // Told only when the duty changes.
    expect(observed.duty).to.deep.equal([0.5, 0.25, 0.125, 0.0625, MIN_DUTY]);
  });

  it('pauses after a step so that the step had its share of the time, and shrinks the steps', async () => {
    const { pacer, pauses, observed, taking } = pacerOnClock();
    pacer.report('slot 1', 50);
    pacer.tick();
    pacer.tick();
    expect(pacer.duty).to.equal(0.25);
    await pacer.step('reports.generate', taking(100));
    expect(pauses).to.deep.equal([300]);
    expect(observed.paused).to.deep.equal([[300, 'reports.generate']]);
    // Ramped up by earlier steps, a step is as large as the duty allows.
    await pacer.step('reports.generate', taking(1));
    await pacer.step('reports.generate', taking(1));
    expect(pacer.size(1000, 100)).to.equal(250);
    expect(pacer.size(200, 100)).to.equal(100);
  });

  it('recovers slowly once the serving processes are calm, and forgets reports that stopped', () => {
    const { pacer, advance } = pacerOnClock();
    for (let i = 0; i < 10; i += 1) {
      pacer.report('slot 1', 100);
      pacer.tick();
    }
    expect(pacer.duty).to.equal(MIN_DUTY);
    // The held-up process says nothing more: its last report goes stale and the duty climbs back.
    let ticks = 0;
    while (pacer.duty < 1) {
      advance(PACING_TICK_MS);
      pacer.tick();
      ticks += 1;
    }
    expect(ticks * PACING_TICK_MS).to.be.within(9_000, 11_000);
  });

  it('takes the worst of several serving processes', () => {
    const { pacer } = pacerOnClock();
    pacer.report('slot 1', 2);
    pacer.report('slot 2', 30);
    pacer.tick();
    expect(pacer.duty).to.equal(0.5);
  });

  it('does not pause after a step that failed', async () => {
    const { pacer, pauses } = pacerOnClock();
    pacer.report('slot 1', 50);
    pacer.tick();
    let caught: unknown;
    await pacer
      .step('scim.sync', async () => {
        throw new Error('refused');
      })
      .catch((err: unknown) => (caught = err));
    expect((caught as Error).message).to.equal('refused');
    expect(pauses).to.deep.equal([]);
  });

  it('ends a pause early once the work is being stopped', async () => {
    // The step takes a second by the pacer's clock, so at the floor its pause would be the longest
    // (5 s); the real sleep is cut short by the abort, sent as soon as the pause begins.
    const stopping = new AbortController();
    let now = 0;
    const paused: number[] = [];
    const pacer = new Pacer({
      enabled: true,
      delayMs: 10,
      now: () => now,
      observe: {
        duty: () => undefined,
        paused: (ms) => {
          paused.push(ms);
          setImmediate(() => stopping.abort());
        },
      },
    });
    for (let i = 0; i < 6; i += 1) {
      pacer.report('slot 1', 100);
      pacer.tick();
    }
    expect(pacer.duty).to.equal(MIN_DUTY);
    const from = performance.now();
    await pacer.step(
      'scim.sync',
      async () => {
        now += 1_000;
      },
      stopping.signal,
    );
    expect(paused).to.deep.equal([5_000]);
    expect(performance.now() - from).to.be.lessThan(1_000);
  });

  it('switched off, never pauses nor shrinks, whatever it hears', async () => {
    const { pacer, pauses, taking } = pacerOnClock(false);
    pacer.report('slot 1', 500);
    pacer.tick();
    await pacer.step('scim.sync', taking(100));
    expect(pauses).to.deep.equal([]);
    expect(pacer.size(1000, 100)).to.equal(1000);
  });

  /**
   * What a LoopDelay told while the loop was held for 60 ms once: the hold comes after its first
   * report, and the reports are taken up to the first one made after the hold.
   */
  async function heardAroundAHold(served?: () => number): Promise<number[]> {
    const delays: number[] = [];
    let told: (() => void) | undefined;
    const nextReport = (): Promise<void> => new Promise((resolve) => (told = resolve));
    const loop = new LoopDelay((ms) => {
      delays.push(ms);
      told?.();
    }, served);
    loop.start();
    try {
      await nextReport();
      const blockedAt = performance.now();
      while (performance.now() - blockedAt < 60);
      // The hold falls in the window that the next report closes.
      await nextReport();
    } finally {
      loop.stop();
    }
    return delays;
  }

  it('hears how long this process held its event loop', async () => {
    let served = 0;
    const delays = await heardAroundAHold(() => (served += 1));
    expect(Math.max(...delays)).to.be.at.least(45);
  });

  it('says nothing of a held loop while no request was served', async () => {
    const delays = await heardAroundAHold(() => 0);
    expect(delays.length).to.be.at.least(1);
    expect(Math.max(...delays)).to.equal(0);
  });

  it('without a count of requests, tells every delay', async () => {
    expect(Math.max(...(await heardAroundAHold()))).to.be.at.least(45);
  });
});

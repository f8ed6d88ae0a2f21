import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { requiredQueryNames } from '../../src/db/catalogue.js';
import { projectRoot } from '../../src/paths.js';
import { engineApi, namer } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { until } from '../helpers/wait.js';

/**
 * The Grafana dashboard of deploy/grafana uses only what the service exposes: every metric its
 * queries name is a metric family of a running service's /metrics, every label its selectors
 * filter on is one the family carries, and every route, unit of work and periodic task it picks
 * out by name exists.
 */

const DASHBOARD_FILE = path.join(projectRoot(), 'deploy', 'grafana', 'principals-access-service.json');

// ---------------------------------------------------------------------------------------------
// PromQL, as far as the dashboard needs it read

/** Words of PromQL that can stand where a metric name could: keywords and modifiers. */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'atan2',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'start',
  'end',
  'inf',
  'nan',
]);

/** Aggregation operators: followed by `(` once their grouping is taken out, but named here too. */
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);

const STRING = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
/** Grafana's variables (`$job`, `${job}`, `$__rate_interval`), which stand for values, never names. */
const VARIABLE = /\$\{[^}]*\}|\$\w+/g;
/** A number, a duration (`5m`, `1h30m`) or a hexadecimal literal; or a name. */
const TOKEN =
  /0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?(?:[a-zA-Z]+\d*)*|[A-Za-z_:][A-Za-z0-9_:]*/g;

/**
 * The metric names a PromQL expression selects: names that are not a function or an aggregation
 * (followed by `(`), a keyword, a label (inside `{…}` or a `by (…)`-like list), a string, a
 * number or duration, or a Grafana variable. A selector by `__name__` is refused rather than read
 * wrongly.
 */
function metricNamesIn(expr: string): string[] {
  let text = expr.replace(STRING, ' "" ');
  if (/__name__/.test(text)) throw new Error(`a selector by __name__ is not read: ${expr}`);
  text = text
    .replace(/#[^\n]*/g, ' ')
    .replace(VARIABLE, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ');
  const names = new Set<string>();
  for (const match of text.matchAll(TOKEN)) {
    const word = match[0];
    if (!/^[A-Za-z_:]/.test(word)) continue;
    const lower = word.toLowerCase();
    if (KEYWORDS.has(lower) || AGGREGATIONS.has(lower)) continue;
    const after = text.slice(match.index + word.length).trimStart();
    if (after.startsWith('(')) continue;
    names.add(word);
  }
  return [...names].sort();
}

interface Matcher {
  metric: string;
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** The label matchers of the selectors that name their metric (`metric{label="value", …}`). */
function matchersIn(expr: string): Matcher[] {
  const out: Matcher[] = [];
  // Comments out, strings kept (a `#` inside a string is not a comment).
  const text = expr.replace(
    /("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|#[^\n]*/g,
    (_all, kept?: string) => kept ?? ' ',
  );
  for (const selector of text.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)\s*\{((?:[^}"]|"(?:[^"\\]|\\.)*")*)\}/g)) {
    const metric = selector[1]!;
    for (const m of selector[2]!.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      out.push({ metric, label: m[1]!, op: m[2] as Matcher['op'], value: m[3]! });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The exposition

interface Family {
  type: string;
  /** Label names seen on its samples. */
  labels: Set<string>;
  /** Each sample's labels. */
  samples: Record<string, string>[];
}

/** Metric families from `# TYPE` lines (present without samples), with the samples below them. */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE ([A-Za-z_:][A-Za-z0-9_:]*) (\w+)$/.exec(line);
    if (type) {
      families.set(type[1]!, { type: type[2]!, labels: new Set(), samples: [] });
      continue;
    }
    const sample = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!sample) continue;
    const family = families.get(sample[1]!) ?? families.get(sample[1]!.replace(/_(?:bucket|sum|count)$/, ''));
    if (!family) continue;
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[m[1]!] = m[2]!;
      family.labels.add(m[1]!);
    }
    family.samples.push(labels);
  }
  return families;
}

/**
 * The family a name in a query selects, or why it selects nothing: a histogram's series are its
 * `_bucket`, `_sum` and `_count`, a summary's its own name (with `quantile`), `_sum` and `_count`.
 */
function familyOf(name: string, families: Map<string, Family>): { family: string } | { problem: string } {
  const own = families.get(name);
  if (own) {
    return own.type === 'histogram'
      ? { problem: `${name} is a histogram: select ${name}_bucket, _sum or _count` }
      : { family: name };
  }
  const suffixed = /^(.*)_(bucket|sum|count)$/.exec(name);
  const base = suffixed ? families.get(suffixed[1]!) : undefined;
  if (base && (base.type === 'histogram' || (base.type === 'summary' && suffixed![2] !== 'bucket'))) {
    return { family: suffixed![1]! };
  }
  return { problem: `${name} is not exposed` };
}

/** A matcher's value as alternatives, each of which must select something (`a|b|c`, or one regex). */
function alternatives(matcher: Matcher): RegExp[] {
  if (matcher.op === '=') return [new RegExp(`^${matcher.value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)];
  const parts = /[()]/.test(matcher.value) ? [matcher.value] : matcher.value.split('|');
  return parts.map((part) => new RegExp(`^(?:${part})$`));
}

// ---------------------------------------------------------------------------------------------
// The dashboard

interface Target {
  expr?: unknown;
  refId?: unknown;
}

interface Panel {
  type?: unknown;
  title?: unknown;
  datasource?: { type?: unknown; uid?: unknown };
  targets?: Target[];
  panels?: Panel[];
}

interface Dashboard {
  schemaVersion?: unknown;
  panels?: Panel[];
  templating?: { list?: { name?: unknown; type?: unknown; query?: unknown; definition?: unknown }[] };
}

/** Every panel but the rows, those inside collapsed rows included. */
function panelsOf(dashboard: Dashboard): Panel[] {
  const out: Panel[] = [];
  const walk = (panels: Panel[] | undefined): void => {
    for (const panel of panels ?? []) {
      if (panel.type === 'row') walk(panel.panels);
      else out.push(panel);
    }
  };
  walk(dashboard.panels);
  return out;
}

async function readDashboard(): Promise<Dashboard> {
  return JSON.parse(await readFile(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Queries of the dashboard with where each comes from: panels' targets and the variables. */
function queriesOf(dashboard: Dashboard): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const panel of panelsOf(dashboard)) {
    for (const target of panel.targets ?? []) {
      if (typeof target.expr === 'string')
        out.push({ where: `panel "${String(panel.title)}" (${String(target.refId)})`, expr: target.expr });
    }
  }
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const query = typeof variable.definition === 'string' ? variable.definition : '';
    // label_values(selector, label): the selector is PromQL, the label is not.
    const selector = /^label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$/.exec(query.trim())?.[1];
    out.push({ where: `variable ${String(variable.name)}`, expr: selector ?? query });
  }
  return out;
}

/** Units of work the service names: its declared queries and the units its writes and reads name. */
async function knownUnits(): Promise<Set<string>> {
  const units = new Set(requiredQueryNames());
  const src = path.join(projectRoot(), 'src');
  for (const file of await readdir(src, { recursive: true })) {
    if (!file.endsWith('.ts')) continue;
    const text = await readFile(path.join(src, file), 'utf8');
    for (const m of text.matchAll(/\.(?:write|read)\(\s*'([^']+)'/g)) units.add(m[1]!);
  }
  return units;
}

/**
 * /metrics as a scraper reads it. With neither METRICS_TOKEN nor METRICS_PORT set (the test
 * configuration reads nothing from the environment), it answers on the service's own port
 * without credentials.
 */
async function scrape(http: HttpClient): Promise<string> {
  const res = await http.get('/metrics');
  expect(res.status, res.text).to.equal(200);
  return res.text;
}

// ---------------------------------------------------------------------------------------------

describe('Grafana dashboard (deploy/grafana)', () => {
  describe('reading PromQL', () => {
    it('finds the metric names and leaves functions, labels, keywords and variables out', () => {
      expect(
        metricNamesIn(
          'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{job=~"$job",route="/v1/x"}[$__rate_interval])))',
        ),
      ).to.deep.equal(['http_request_duration_seconds_bucket']);
      expect(
        metricNamesIn('sum(rate(a_total[5m])) by (instance) / on (instance) group_left b_info'),
      ).to.deep.equal(['a_total', 'b_info']);
      expect(metricNamesIn('topk(10, x) > bool 1e-3 and y offset 1h30m unless z @ start()')).to.deep.equal([
        'x',
        'y',
        'z',
      ]);
      expect(metricNamesIn('label_replace(up, "dst", "$1", "src", "(.*)") or vector(0)')).to.deep.equal([
        'up',
      ]);
      expect(metricNamesIn('max_over_time(m:recorded[1h:5m]) - 2*m2')).to.deep.equal(['m2', 'm:recorded']);
      expect(() => metricNamesIn('{__name__=~"x.*"}')).to.throw(/__name__/);
    });

    it('reads the label matchers of selectors', () => {
      expect(matchersIn('rate(a{job=~"$job",route="/v1/{id}",status!~"2.."}[5m]) + b{x!="y"}')).to.deep.equal(
        [
          { metric: 'a', label: 'job', op: '=~', value: '$job' },
          { metric: 'a', label: 'route', op: '=', value: '/v1/{id}' },
          { metric: 'a', label: 'status', op: '!~', value: '2..' },
          { metric: 'b', label: 'x', op: '!=', value: 'y' },
        ],
      );
      expect(matchersIn('a{route="/x#y"} # b{c="d"}')).to.deep.equal([
        { metric: 'a', label: 'route', op: '=', value: '/x#y' },
      ]);
    });

    it('maps histogram series to their family and refuses a bare histogram', () => {
      const families = parseExposition(
        [
          '# HELP h_seconds a histogram',
          '# TYPE h_seconds histogram',
          'h_seconds_bucket{le="0.1",route="/a"} 1',
          'h_seconds_sum{route="/a"} 0.05',
          '# TYPE c_total counter',
        ].join('\n'),
      );
      expect(familyOf('h_seconds_bucket', families)).to.deep.equal({ family: 'h_seconds' });
      expect(familyOf('h_seconds_count', families)).to.deep.equal({ family: 'h_seconds' });
      expect(familyOf('c_total', families)).to.deep.equal({ family: 'c_total' });
      expect(familyOf('h_seconds', families)).to.have.property('problem');
      expect(familyOf('c_total_sum', families)).to.have.property('problem');
      expect([...families.get('h_seconds')!.labels].sort()).to.deep.equal(['le', 'route']);
    });
  });

  describe('the file', () => {
    it('parses, and each panel has a title and a query on the data source of the dashboard', async () => {
      const dashboard = await readDashboard();
      expect(dashboard.schemaVersion).to.be.a('number');
      const variables = dashboard.templating?.list ?? [];
      expect(variables.find((v) => v.name === 'datasource')).to.include({
        type: 'datasource',
        query: 'prometheus',
      });
      expect(variables.map((v) => v.name)).to.include.members(['job', 'instance']);
      const panels = panelsOf(dashboard);
      expect(panels).to.not.be.empty;
      const wrong: string[] = [];
      for (const [i, panel] of panels.entries()) {
        const title = typeof panel.title === 'string' ? panel.title.trim() : '';
        const name = title || `panel #${i}`;
        if (!title) wrong.push(`${name} has no title`);
        if (panel.datasource?.uid !== '${datasource}')
          wrong.push(`${name} does not use the datasource variable`);
        const targets = panel.targets ?? [];
        if (targets.length === 0) wrong.push(`${name} has no target`);
        for (const target of targets) {
          if (typeof target.expr !== 'string' || !target.expr.trim())
            wrong.push(`${name} has a target without expr`);
        }
      }
      expect(wrong, wrong.join('\n')).to.deep.equal([]);
    });
  });

  describe('against the running service', () => {
    const fx = useApp();
    const { uniq, type } = namer();

    before(async () => {
      // A decision allowed and one denied, so that the decision routes' series exist.
      const world = engineApi(fx.api, uniq);
      const principal = (await world.principal()).id as string;
      const resourceType = type();
      await world.policy({
        subjects: { principals: [principal] },
        resources: [{ type: resourceType, identifier: 'a' }],
      });
      for (const identifier of ['a', 'b']) {
        const res = await fx.api.post('/v1/decisions/evaluate', {
          principal_id: principal,
          action: 'read',
          resource: { type: resourceType, identifier },
        });
        expect(res.status, res.text).to.equal(200);
      }
    });

    it('names only metrics the service exposes', async () => {
      const families = parseExposition(await scrape(fx.http));
      const missing: string[] = [];
      for (const { where, expr } of queriesOf(await readDashboard())) {
        for (const name of metricNamesIn(expr)) {
          const found = familyOf(name, families);
          if ('problem' in found) missing.push(`${where}: ${found.problem}`);
        }
      }
      expect(
        missing,
        `the dashboard uses what /metrics does not expose:\n${missing.join('\n')}`,
      ).to.deep.equal([]);
    });

    it('filters on labels the metrics carry, and on routes, units and tasks that exist', async () => {
      const dashboard = await readDashboard();
      const matchers = queriesOf(dashboard).flatMap(({ where, expr }) =>
        matchersIn(expr).map((matcher) => ({ where, matcher })),
      );
      // The periodic tasks named are among those the service has run (each runs once at start).
      const tasks = new Set(
        matchers
          .filter(({ matcher }) => matcher.label === 'task')
          .flatMap(({ matcher }) => alternatives(matcher)),
      );
      let families = parseExposition(await scrape(fx.http));
      const ranTasks = (): string[] =>
        (families.get('background_task_runs_total')?.samples ?? []).map((s) => s['task'] ?? '');
      await until(
        'every periodic task the dashboard names to have run',
        async () => {
          families = parseExposition(await scrape(fx.http));
          return [...tasks].every((task) => ranTasks().some((ran) => task.test(ran)));
        },
        10_000,
        250,
      ).catch(() => undefined);

      const openapi = await fx.http.get('/v1/openapi.json');
      const known: Record<string, Set<string>> = {
        route: new Set([...Object.keys(openapi.body.paths as Record<string, unknown>), 'unmatched']),
        unit: await knownUnits(),
        task: new Set(ranTasks()),
      };
      const wrong: string[] = [];
      for (const { where, matcher } of matchers) {
        const { label, metric } = matcher;
        if (label === 'job' || label === 'instance') continue;
        const found = familyOf(metric, families);
        const family = 'family' in found ? families.get(found.family) : undefined;
        if (family && family.samples.length > 0 && !family.labels.has(label)) {
          wrong.push(`${where}: ${metric} has no label ${label}`);
        }
        const values = known[label];
        if (!values || matcher.op.startsWith('!') || /\$/.test(matcher.value)) continue;
        for (const alternative of alternatives(matcher)) {
          if (![...values].some((value) => alternative.test(value))) {
            wrong.push(`${where}: no ${label} matches ${alternative.source}`);
          }
        }
      }
      expect(wrong, wrong.join('\n')).to.deep.equal([]);
    });
  });
});

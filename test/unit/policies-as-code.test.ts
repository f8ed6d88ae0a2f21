import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { policiesCommand, type PoliciesIo } from '../../cli/policies/command.js';
import { diffPolicies, type LivePolicy } from '../../cli/policies/diff.js';
import { loadPolicyFolder, PolicyFolderError, type PolicyFolder } from '../../cli/policies/folder.js';
import { loadFolderTests, resultsText, runInMemory } from '../../cli/policies/tests.js';
import { bodyFields } from '../../src/policies/model.js';

/**
 * A folder of policies as code (docs/policies-as-code.md) without a service: loading it (every
 * problem named by its file), diffing it against live policies, and deciding its tests on the
 * engine in memory. The plan and apply against the service are test/http/policies-as-code.test.ts.
 */

const EXAMPLE = path.join('examples', 'policies');
const PRN = 'prn_01JEXAMP1E0000000000EXP0RT';

describe('policies as code: the folder', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pas-policies-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string): string => {
    writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  const problems = (): string[] => {
    try {
      loadPolicyFolder(dir);
    } catch (err) {
      expect(err).to.be.instanceOf(PolicyFolderError);
      return [...(err as PolicyFolderError).problems];
    }
    throw new Error('the folder loaded');
  };
  const GOOD = `effect: allow\nsubjects: { principals: [${PRN}] }\nactions: [read]\nresources: [{ type: invoice, identifier: '*' }]\n`;

  it('loads the example: names from the files, YAML and JSON, defaults filled in', () => {
    const folder = loadPolicyFolder(EXAMPLE);
    expect(folder.policies.map((p) => p.name)).to.deep.equal([
      'billing-assistant-searches-invoices',
      'finance-reads-invoices',
      'invoice-exporter-reads-invoices',
      'no-export-of-invoices-on-legal-hold',
    ]);
    const exporter = folder.policies.find((p) => p.name === 'invoice-exporter-reads-invoices')!;
    expect(exporter.file).to.equal(path.join(EXAMPLE, 'invoice-exporter-reads-invoices.yaml'));
    expect(exporter.body).to.include({
      name: 'invoice-exporter-reads-invoices',
      status: 'active',
      effect: 'allow',
    });
  });

  it('refuses a file that does not parse, naming it', () => {
    const file = write('broken.yaml', 'effect: allow\nsubjects: [unclosed\n');
    write('fine.yaml', GOOD);
    const found = problems();
    expect(found).to.have.length(1);
    expect(found[0]).to.match(new RegExp(`^${escape(file)}: does not parse`));
  });

  it('refuses an unknown key, naming the file and the key', () => {
    const file = write('typo.yaml', `${GOOD}condition: { context.ip: 10.0.0.1 }\n`);
    const [problem] = problems();
    expect(problem).to.contain(file).and.to.contain('/condition is not an allowed field');
  });

  it('refuses a name that is not the file’s, and takes a name that is', () => {
    const file = write('reads-invoices.yaml', `name: read-invoices\n${GOOD}`);
    const [problem] = problems();
    expect(problem)
      .to.contain(file)
      .and.to.contain("name 'read-invoices' is not the file's name 'reads-invoices'");
    write('reads-invoices.yaml', `name: reads-invoices\n${GOOD}`);
    expect(loadPolicyFolder(dir).policies.map((p) => p.name)).to.deep.equal(['reads-invoices']);
  });

  it('refuses what the service would refuse, and two files of one name whatever the case', () => {
    write('nobody.yaml', GOOD.replace(`principals: [${PRN}]`, 'principals: []'));
    write('closed.yaml', `${GOOD}valid_until: 2020-01-01T00:00:00Z\n`);
    write('Twice.yaml', GOOD);
    write(
      'twice.json',
      JSON.stringify({
        effect: 'allow',
        subjects: { principals: [PRN] },
        actions: ['read'],
        resources: [{ type: 'a', identifier: 'b' }],
      }),
    );
    write('empty.yml', '');
    write('README.md', '# not a policy');
    const found = problems().join('\n');
    expect(found)
      .to.contain(`${path.join(dir, 'nobody.yaml')}: the service would refuse it`)
      .and.to.contain('/subjects selects no principal');
    expect(found)
      .to.contain(`${path.join(dir, 'closed.yaml')}: the service would refuse it`)
      .and.to.contain('/valid_until');
    expect(found).to.contain(
      `${path.join(dir, 'twice.json')}: names the same policy as ${path.join(dir, 'Twice.yaml')}`,
    );
    expect(found).to.contain(`${path.join(dir, 'empty.yml')}: is empty`);
    expect(found).to.not.contain('README');
  });
});

describe('policies as code: the diff', () => {
  const folder = loadPolicyFolder(EXAMPLE);
  // The live policies as the service would hold them had the folder been applied.
  const applied = (): LivePolicy[] =>
    folder.policies.map((p, i) => ({ id: `pol_${i}`, version: 3, ...bodyFields(p.body) }));

  it('creates what is not live, and nothing differs once applied', () => {
    expect(diffPolicies(folder.policies, []).map((c) => [c.action, c.name])).to.deep.equal(
      folder.policies.map((p) => ['create', p.name]),
    );
    expect(diffPolicies(folder.policies, applied())).to.deep.equal([]);
  });

  it('ignores what the service sets, and the order of sets and of keys', () => {
    const live = applied().map((p) => ({
      ...p,
      id: 'pol_other',
      version: 42,
      created_at: '2026-01-01T00:00:00.000Z',
      actions: [...p.actions].reverse(),
      resources: [...p.resources].reverse(),
      conditions: Object.fromEntries(Object.entries(p.conditions).reverse()),
    }));
    expect(diffPolicies(folder.policies, live)).to.deep.equal([]);
  });

  it('updates a policy that differs, naming the fields, at the version read', () => {
    const live = applied();
    const exporter = live.find((p) => p.name === 'invoice-exporter-reads-invoices')!;
    exporter.actions = ['read'];
    exporter.description = null;
    const changes = diffPolicies(folder.policies, live);
    expect(changes).to.have.length(1);
    const [change] = changes;
    expect(change).to.deep.include({
      action: 'update',
      name: 'invoice-exporter-reads-invoices',
      live: { id: exporter.id, version: 3 },
    });
    expect(change!.action === 'update' && change!.fields.map((f) => [f.field, f.from, f.to])).to.deep.equal([
      ['description', null, 'The invoice export job reads and exports invoices from inside the network'],
      ['actions', ['read'], ['read', 'export']],
    ]);
  });

  it('deletes live policies the folder lacks only with prune, and limits to one with only', () => {
    const extra: LivePolicy = { ...applied()[0]!, id: 'pol_extra', name: 'legacy-access' };
    // A draft grants nothing, but is a live policy the folder lacks all the same.
    const draft: LivePolicy = { ...extra, id: 'pol_draft', name: 'someday', status: 'draft' };
    const live = [...applied(), extra, draft];
    expect(diffPolicies(folder.policies, live)).to.deep.equal([]);
    expect(diffPolicies(folder.policies, live, { prune: true })).to.deep.equal([
      { action: 'delete', name: 'legacy-access', live: { id: 'pol_extra', version: 3 } },
      { action: 'delete', name: 'someday', live: { id: 'pol_draft', version: 3 } },
    ]);
    expect(
      diffPolicies(folder.policies, [], { only: 'Finance-Reads-Invoices' }).map((c) => [c.action, c.name]),
    ).to.deep.equal([['create', 'finance-reads-invoices']]);
    expect(
      diffPolicies(folder.policies, live, { prune: true, only: 'finance-reads-invoices' }),
    ).to.deep.equal([]);
  });

  it('compares windows as instants', () => {
    const live = applied();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pas-policies-'));
    try {
      cpSync(EXAMPLE, dir, { recursive: true });
      writeFileSync(
        path.join(dir, 'finance-reads-invoices.yaml'),
        `effect: allow\ndescription: Finance reads invoices\nsubjects: { groups: [grp_01JEXAMP1E0000000000GRPFNC] }\nactions: [read]\nresources: [{ type: invoice, identifier: '*' }]\nvalid_until: '2099-01-01T01:00:00+01:00'\n`,
      );
      const changed = loadPolicyFolder(dir);
      const finance = live.find((p) => p.name === 'finance-reads-invoices')!;
      finance.valid_until = '2099-01-01T00:00:00.000Z';
      expect(diffPolicies(changed.policies, live)).to.deep.equal([]);
      finance.valid_until = null;
      expect(
        diffPolicies(changed.policies, live).map(
          (c) => c.action === 'update' && c.fields.map((f) => f.field),
        ),
      ).to.deep.equal([['valid_until']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('policies as code: the tests in memory', () => {
  let dir: string;
  let folder: PolicyFolder;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pas-policies-'));
    cpSync(EXAMPLE, dir, { recursive: true });
    folder = loadPolicyFolder(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('passes the example’s cases on the folder’s policies', () => {
    const results = runInMemory(loadFolderTests(folder));
    expect(results.length).to.be.greaterThan(5);
    expect(results.filter((r) => r.outcome !== 'pass')).to.deep.equal([]);
  });

  it('fails a case whose answer is another, showing what was expected and what came', () => {
    writeFileSync(
      path.join(dir, 'tests', 'wrong.yaml'),
      `rule: a wrong expectation
principals: [{ id: ${PRN}, type: SERVICE_ACCOUNT, name: Exporter }]
cases:
  - name: exports from anywhere
    principal: ${PRN}
    action: export
    resource: invoice:1
    context: { ip: 192.0.2.1 }
    allowed: true
    reasons: [POLICY_ALLOW invoice-exporter-reads-invoices]
  - name: reads from inside
    principal: ${PRN}
    resource: invoice:1
    context: { ip: 10.0.0.9 }
    allowed: true
    reasons: [POLICY_ALLOW invoice-exporter-reads-invoices]
`,
    );
    const results = runInMemory(loadFolderTests(folder)).filter((r) => r.file.endsWith('wrong.yaml'));
    expect(results.map((r) => [r.name, r.outcome])).to.deep.equal([
      ['exports from anywhere', 'fail'],
      ['reads from inside', 'pass'],
    ]);
    expect(results[0]).to.deep.include({
      expected: { allowed: true, reasons: ['POLICY_ALLOW invoice-exporter-reads-invoices'] },
      got: { allowed: false, reasons: ['NO_MATCHING_POLICY'] },
    });
    const text = resultsText(results);
    expect(text).to.contain('FAIL  exports from anywhere');
    expect(text).to.contain('expected: ALLOW [POLICY_ALLOW invoice-exporter-reads-invoices]');
    expect(text).to.contain('got:      DENY [NO_MATCHING_POLICY]');
    expect(text).to.contain('1 passed, 1 failed, 0 skipped');
  });

  it('refuses test files that hold policies of their own, or name a policy the folder lacks', () => {
    const file = path.join(dir, 'tests', 'own.yaml');
    writeFileSync(
      file,
      `rule: r\npolicies: [{ id: p, effect: allow, principals: [${PRN}], resources: ['a:b'] }]\ncases: [{ name: n, principal: ${PRN}, resource: 'a:b', allowed: true, reasons: [POLICY_ALLOW p] }]\n`,
    );
    expect(() => loadFolderTests(folder)).to.throw(`${file}: holds policies`);
    writeFileSync(
      file,
      `rule: r\ncases:\n  - { table: action, principal: ${PRN}, resource: 'a:b', policy: no-such-policy, yes: [read] }\n`,
    );
    expect(() => loadFolderTests(folder)).to.throw(/policy 'no-such-policy'/);
  });

  it('refuses a folder without tests, and a misspelt key of a case, naming the file', () => {
    rmSync(path.join(dir, 'tests'), { recursive: true });
    expect(() => loadFolderTests(folder)).to.throw(/has no tests/);
    mkdirSync(path.join(dir, 'tests'));
    const file = path.join(dir, 'tests', 'typo.yaml');
    writeFileSync(
      file,
      `rule: r\ncases: [{ name: n, principal: ${PRN}, resource: 'a:b', alowed: true, reasons: [X] }]\n`,
    );
    expect(() => loadFolderTests(folder)).to.throw(`${file} does not fit its schema`);
    expect(() => loadFolderTests(folder)).to.throw(/'alowed'/);
  });
});

describe('policies as code: pas policies test', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pas-policies-'));
    cpSync(EXAMPLE, dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The command run in this process, with no service behind it; what it wrote and its code. */
  const run = async (...args: string[]) => {
    const written: string[] = [];
    let code = 0;
    const io: PoliciesIo = {
      out: (text) => written.push(text),
      note: (text) => written.push(text),
      interactive: () => false,
      confirm: async () => false,
      exit: (c) => (code = c),
    };
    const command = policiesCommand(async () => {
      throw new Error('no service in this test');
    }, io);
    await command.parseAsync(args, { from: 'user' });
    return { code, text: written.join('') };
  };

  it('ends 0 when every case passes, 1 when one fails, and refuses a folder it cannot use', async () => {
    const passed = await run('test', dir);
    expect(passed.code).to.equal(0);
    expect(passed.text).to.match(/12 passed, 0 failed, 0 skipped/);

    const file = path.join(dir, 'invoice-exporter-reads-invoices.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('10.0.0.0/8', '172.16.0.0/12'));
    const failed = await run('test', dir, '--json');
    expect(failed.code).to.equal(1);
    const results = JSON.parse(failed.text) as { name: string; outcome: string }[];
    expect(results.filter((r) => r.outcome === 'fail').map((r) => r.name)).to.include(
      'the exporter exports from the office network',
    );

    writeFileSync(file, 'effect: maybe\n');
    await run('test', dir).then(
      () => expect.fail('tested a folder with a broken policy'),
      (err: Error) => expect(err.message).to.contain(`${file}: is not a policy body`),
    );
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

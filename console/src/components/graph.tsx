import type { Core, ElementDefinition, NodeSingular } from 'cytoscape';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Card, Principal, Relationship } from '../types';

/** More nodes than this at one level are folded into one "+ n more" node: the graph stays legible. */
const PER_LEVEL = 40;

export type NodeKind = 'subject' | 'manager' | 'report' | 'group' | 'more';

interface Built {
  elements: ElementDefinition[];
  /** Nodes left out of the drawing, per level label. */
  folded: { label: string; count: number }[];
}

/**
 * The graph of one principal's relationships: managers above it, reports below it and groups
 * beside it, each at its depth, with the edges the API reports (the chain of managers, each
 * report's `manager_id`, each group's `via`). Levels come nearest first, so an edge's far end is
 * always drawn already, unless it was folded away.
 */
export function buildElements(subject: Principal, relationships: Relationship[]): Built {
  const nodes = new Map<string, ElementDefinition>();
  const edges: ElementDefinition[] = [];
  const folded: Built['folded'] = [];
  const add = (card: Card, kind: NodeKind, depth: number): void => {
    if (!nodes.has(card.id)) {
      nodes.set(card.id, {
        group: 'nodes',
        data: { id: card.id, label: card.name || card.id, kind, depth, type: card.type },
      });
    }
  };
  const edge = (from: string, to: string, kind: 'reports_to' | 'member_of'): void => {
    if (!nodes.has(from) || !nodes.has(to)) return;
    edges.push({ group: 'edges', data: { id: `${kind}:${from}->${to}`, source: from, target: to, kind } });
  };
  /** The first PER_LEVEL of a level; the rest become one "+ n more" node at that level. */
  const fold = <C extends Card>(
    r: { principals: C[]; count: number; depth: number },
    kind: 'report' | 'group',
  ): C[] => {
    const shown = r.principals.slice(0, PER_LEVEL);
    const hidden = r.count - shown.length;
    if (hidden > 0) {
      const id = `more:${kind}:${r.depth}`;
      nodes.set(id, {
        group: 'nodes',
        data: { id, label: `+ ${hidden} more`, kind: 'more', depth: r.depth },
      });
      folded.push({
        label: `${kind === 'report' ? 'reports' : 'groups'} at depth ${r.depth}`,
        count: hidden,
      });
    }
    return shown;
  };
  add({ id: subject.id, name: subject.name, type: subject.type }, 'subject', 0);
  let below = subject.id;
  for (const r of relationships) {
    switch (r.type) {
      case 'manager':
        add(r.principal, 'manager', r.depth);
        edge(below, r.principal.id, 'reports_to');
        below = r.principal.id;
        break;
      case 'reports':
        for (const card of fold(r, 'report')) {
          add(card, 'report', r.depth);
          if (card.manager_id) edge(card.id, card.manager_id, 'reports_to');
        }
        break;
      case 'group_member':
        for (const card of fold(r, 'group')) {
          add(card, 'group', r.depth);
          for (const member of card.via) edge(member, card.id, 'member_of');
        }
        break;
    }
  }
  return { elements: [...nodes.values(), ...edges], folded };
}

const COLORS: Record<NodeKind, string> = {
  subject: '#d9480f',
  manager: '#1c7ed6',
  report: '#2f9e44',
  group: '#7048e8',
  more: '#868e96',
};

/**
 * Places the subject in the middle, its managers in a column above, reports in rows below and
 * groups in columns to the right: where a node sits says how it relates, at a glance.
 */
function positions(elements: ElementDefinition[]): Map<string, { x: number; y: number }> {
  const levels: Record<'manager' | 'report' | 'group', Map<number, string[]>> = {
    manager: new Map(),
    report: new Map(),
    group: new Map(),
  };
  const at = new Map<string, { x: number; y: number }>();
  for (const e of elements) {
    if (e.group !== 'nodes') continue;
    const d = e.data as { id: string; kind: NodeKind; depth: number };
    if (d.kind === 'subject') {
      at.set(d.id, { x: 0, y: 0 });
      continue;
    }
    const kind = d.kind === 'more' ? (d.id.startsWith('more:group') ? 'group' : 'report') : d.kind;
    const level = levels[kind];
    level.set(d.depth, [...(level.get(d.depth) ?? []), d.id]);
  }
  const byDepth = (level: Map<number, string[]>) => [...level.entries()].sort((a, b) => a[0] - b[0]);
  for (const [depth, ids] of byDepth(levels.manager))
    ids.forEach((id) => at.set(id, { x: 0, y: -depth * 110 }));
  const perRow = 8;
  let y = 0;
  for (const [, ids] of byDepth(levels.report)) {
    for (let start = 0; start < ids.length; start += perRow) {
      const row = ids.slice(start, start + perRow);
      y += 110;
      row.forEach((id, i) => at.set(id, { x: (i - (row.length - 1) / 2) * 150, y }));
    }
  }
  for (const [depth, ids] of byDepth(levels.group)) {
    ids.forEach((id, i) => at.set(id, { x: 320 + (depth - 1) * 240, y: (i - (ids.length - 1) / 2) * 60 }));
  }
  return at;
}

export function RelationshipGraph(props: {
  subject: Principal;
  relationships: Relationship[];
  onOpen: (id: string, kind: NodeKind) => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const cy = useRef<Core | null>(null);
  const [failed, setFailed] = useState(false);
  const open = useRef(props.onOpen);
  open.current = props.onOpen;
  const built = buildElements(props.subject, props.relationships);
  const key = JSON.stringify(built.elements.map((e) => (e.data as { id: string }).id));
  useEffect(() => {
    const target = container.current;
    if (!target) return undefined;
    const at = positions(built.elements);
    let cancelled = false;
    let instance: Core | null = null;
    // The library is most of the console's code: it loads with the first graph, not the page.
    import('cytoscape').then(
      ({ default: cytoscape }) => {
        if (cancelled) return;
        instance = cytoscape({
          container: target,
          elements: built.elements,
          layout: { name: 'preset', positions: Object.fromEntries(at), fit: true, padding: 30 },
          minZoom: 0.2,
          maxZoom: 2.5,
          wheelSensitivity: 0.3,
          style: [
            {
              selector: 'node',
              style: {
                label: 'data(label)',
                'font-size': 11,
                'text-valign': 'bottom',
                'text-margin-y': 4,
                'text-wrap': 'ellipsis',
                'text-max-width': '130px',
                color: '#212529',
                width: 26,
                height: 26,
                'border-width': 2,
                'border-color': '#fff',
              },
            },
            ...(Object.entries(COLORS) as [NodeKind, string][]).map(([kind, color]) => ({
              selector: `node[kind = "${kind}"]`,
              style: { 'background-color': color },
            })),
            {
              selector: 'node[kind = "subject"]',
              style: { width: 40, height: 40, 'font-weight': 'bold', 'font-size': 13 },
            },
            { selector: 'node[kind = "group"]', style: { shape: 'round-hexagon', width: 30, height: 30 } },
            { selector: 'node[kind = "manager"]', style: { shape: 'round-rectangle' } },
            { selector: 'node[kind = "more"]', style: { shape: 'round-tag', width: 22, height: 22 } },
            {
              selector: 'edge',
              style: {
                width: 1.5,
                'curve-style': 'bezier',
                'target-arrow-shape': 'triangle',
                'arrow-scale': 0.8,
                'line-color': '#adb5bd',
                'target-arrow-color': '#adb5bd',
              },
            },
            {
              selector: 'edge[kind = "member_of"]',
              style: { 'line-style': 'dashed', 'line-color': '#b197fc', 'target-arrow-color': '#b197fc' },
            },
            { selector: 'node:selected', style: { 'border-color': '#f59f00', 'border-width': 4 } },
          ],
        });
        instance.on('tap', 'node', (event) => {
          const node = event.target as NodeSingular;
          const kind = node.data('kind') as NodeKind;
          if (kind !== 'more' && kind !== 'subject') open.current(node.id(), kind);
        });
        cy.current = instance;
        target.dataset['ready'] = 'true';
      },
      () => setFailed(true),
    );
    return () => {
      cancelled = true;
      instance?.destroy();
      cy.current = null;
    };
    // The element ids decide the drawing; a re-render with the same graph keeps it as it is.
  }, [key]);
  return (
    <figure class="graph">
      <div
        ref={container}
        class="graph-canvas"
        role="img"
        aria-label={`Relationship graph of ${props.subject.name}: ${built.elements.filter((e) => e.group === 'nodes').length} people and groups. The same relationships are listed below it.`}
        data-nodes={built.elements.filter((e) => e.group === 'nodes').length}
        data-edges={built.elements.filter((e) => e.group === 'edges').length}
      />
      {failed && (
        <p class="problem" role="alert">
          The graph could not be drawn (its script did not load); the list below has the same relationships.
        </p>
      )}
      <figcaption>
        <ul class="legend">
          <li class="k-subject">this principal</li>
          <li class="k-manager">manager chain</li>
          <li class="k-report">reports</li>
          <li class="k-group">groups (dashed: member of)</li>
        </ul>
        <span class="muted">Drag to pan, scroll to zoom, click a person to open them.</span>
        <span>
          <button type="button" class="secondary small" onClick={() => cy.current?.fit(undefined, 30)}>
            Fit
          </button>
        </span>
        {built.folded.length > 0 && (
          <span class="muted">
            Not drawn: {built.folded.map((f) => `${f.count} ${f.label}`).join(', ')} (listed below).
          </span>
        )}
      </figcaption>
    </figure>
  );
}

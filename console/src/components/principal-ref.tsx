import { get, post, seg } from '../api';
import type { List, Principal, PrincipalSummary } from '../types';
import { Badge, Link, useLoad } from './ui';

export /**
 * Names the principal a reference points at — an id, or a USER's email as owners may be
 * written — with its status, so a departed owner or manager shows at a glance.
 */
function PrincipalRef(props: { reference: string }) {
  const { reference } = props;
  const found = useLoad(
    async (signal): Promise<PrincipalSummary | null> => {
      if (reference.startsWith('prn_')) {
        return get<Principal>(`/v1/principals/${seg(reference)}`, undefined, signal).catch(() => null);
      }
      const byEmail = await post<List<PrincipalSummary>>('/v1/principals/search', {
        query: {
          type: 'USER',
          email: reference,
          status: ['active', 'suspended', 'deprovisioned', 'deleted'],
        },
        sort: { field: 'updated_at', order: 'desc' },
        limit: 5,
      });
      return byEmail.data.find((u) => u.status === 'active') ?? byEmail.data[0] ?? null;
    },
    [reference],
  );
  if (found.loading) return <span>{reference}</span>;
  if (!found.data) {
    return (
      <span>
        {reference} <span class="warn">(names no principal)</span>
      </span>
    );
  }
  const p = found.data;
  return (
    <span>
      <Link to={`/principals/${p.id}`}>{p.name}</Link>
      {p.email && reference !== p.email && <span class="muted"> {p.email}</span>}
      {p.status !== 'active' && <Badge kind={p.status}>{p.status}</Badge>}
    </span>
  );
}

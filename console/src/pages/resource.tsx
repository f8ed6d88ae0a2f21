import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { get, seg } from '../api';
import { AccessHistory } from '../components/access-history';
import { AsOfNote, AsOfPicker } from '../components/as-of';
import {
  Badge,
  Gate,
  heads,
  Link,
  Pager,
  Panel,
  ProblemBox,
  Shown,
  Table,
  useFocusHeading,
  useLoad,
  whenExact,
} from '../components/ui';
import { navigate, resourcePath } from '../router';
import type { List, Resource, ResourceAccess } from '../types';

/** Registered resources, to pick one from. */
function Registered() {
  const [page, setPage] = useState(1);
  const list = useLoad((signal) => get<List<Resource>>('/v1/resources', { page, limit: 20 }, signal), [page]);
  return (
    <Panel id="registered" title="Registered resources">
      <Shown loaded={list} what="resources" context="Resources">
        {(data) => (
          <>
            {data.data.length === 0 ? (
              <p class="muted">No resource is registered; policies may still name resources exactly.</p>
            ) : (
              <ul class="resource-list">
                {data.data.map((r) => (
                  <li key={`${r.type}:${r.identifier}`}>
                    <Link to={resourcePath(r.type, r.identifier)}>
                      <code>
                        {r.type}:{r.identifier}
                      </code>
                    </Link>
                  </li>
                ))}
              </ul>
            )}
            <Pager label="Resources" {...data.pagination} page={page} onPage={setPage} />
          </>
        )}
      </Shown>
    </Panel>
  );
}

/** A registered resource's attributes and owner. */
function Attributes(props: { type: string; identifier: string }) {
  const registered = useLoad(
    (signal) => get<Resource>(`/v1/resources/${seg(props.type)}/${seg(props.identifier)}`, undefined, signal),
    [props.type, props.identifier],
  );
  if (registered.error !== undefined) return <ProblemBox error={registered.error} context="Resource" />;
  const r = registered.data;
  if (!r) return null;
  return (
    <dl class="facts">
      {Object.entries(r.attributes).map(([k, v]) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd>{Array.isArray(v) ? v.join(', ') : String(v)}</dd>
        </Fragment>
      ))}
      {r.owner_id && (
        <>
          <dt>Owner</dt>
          <dd>
            <Link to={`/principals/${r.owner_id}`}>{r.owner_id}</Link>
          </dd>
        </>
      )}
    </dl>
  );
}

function WhoCanAccess(props: { type: string; identifier: string }) {
  const [page, setPage] = useState(1);
  const [action, setAction] = useState('');
  const [draft, setDraft] = useState('');
  const [asOf, setAsOf] = useState<string | null>(null);
  const who = useLoad(
    (signal) =>
      get<ResourceAccess>(
        '/v1/resources/access',
        {
          type: props.type,
          identifier: props.identifier,
          action,
          page,
          limit: 25,
          ...(asOf ? { as_of: asOf } : {}),
        },
        signal,
      ),
    [props.type, props.identifier, action, page, asOf],
  );
  return (
    <>
      <Panel
        id="who"
        title="Who can access it"
        actions={
          <AsOfPicker
            value={asOf}
            onChange={(at) => {
              setPage(1);
              setAsOf(at);
            }}
          />
        }
      >
        <form
          class="inline-form"
          aria-label="Filter by action"
          onSubmit={(e) => {
            e.preventDefault();
            setPage(1);
            setAction(draft.trim());
          }}
        >
          <label>
            Only those allowed the action
            <input value={draft} onInput={(e) => setDraft(e.currentTarget.value)} placeholder="e.g. read" />
          </label>
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        <Shown
          loaded={who}
          what="who can access it"
          context={asOf ? `Reverse lookup as of ${whenExact(asOf)}` : 'Reverse lookup'}
        >
          {(data) => (
            <>
              {data.as_of && <AsOfNote at={data.as_of} />}
              {data.resource.registered && <Attributes type={props.type} identifier={props.identifier} />}
              {data.resource.registered === false && (
                <p class="muted">
                  This resource is not registered: only policies that name it exactly reach it, not globs.
                </p>
              )}
              <Table
                head={heads('Principal', 'Type', 'Actions', 'Through policies')}
                rows={data.principals.length}
                empty={`Nobody can access it${action ? ` with ${action}` : ''}${data.as_of ? ` as of ${whenExact(data.as_of)}` : ''}.`}
                busy={who.loading}
              >
                {data.principals.map((row) => (
                  <tr key={row.principal.id}>
                    <td>
                      <Link to={`/principals/${row.principal.id}`}>{row.principal.name}</Link>
                      {row.principal.email && <div class="muted">{row.principal.email}</div>}
                    </td>
                    <td>
                      <Badge kind={row.principal.type}>{row.principal.type}</Badge>
                    </td>
                    <td>
                      {row.actions.join(', ')}
                      {row.conditional && <Badge kind="conditional">conditional</Badge>}
                      {row.denied_actions && row.denied_actions.length > 0 && (
                        <div class="lost">except {row.denied_actions.join(', ')}</div>
                      )}
                    </td>
                    <td>
                      {row.granted_by.map((id) => (
                        <div key={id}>
                          <Link to={`/what-if?policy=${id}`}>{id}</Link>
                        </div>
                      ))}
                    </td>
                  </tr>
                ))}
              </Table>
              <Pager label="Principals" {...data.pagination} page={page} onPage={setPage} />
            </>
          )}
        </Shown>
      </Panel>
      <AccessHistory filter={{ resource_type: props.type, identifier: props.identifier }} shows="principal" />
    </>
  );
}

export function ResourcePage(props: { type: string; identifier: string }) {
  const heading = useFocusHeading(`${props.type}:${props.identifier}`);
  const [type, setType] = useState(props.type);
  const [identifier, setIdentifier] = useState(props.identifier);
  const chosen = props.type !== '' && props.identifier !== '';
  return (
    <Gate feature="resources">
      <h1 ref={heading} tabIndex={-1}>
        {chosen ? (
          <>
            Who can reach <code>{`${props.type}:${props.identifier}`}</code>
          </>
        ) : (
          'Who can reach a resource'
        )}
      </h1>
      <form
        class="panel inline-form"
        aria-label="Choose a resource"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(resourcePath(type.trim(), identifier.trim()));
        }}
      >
        <label>
          Type
          <input
            name="type"
            required
            value={type}
            onInput={(e) => setType(e.currentTarget.value)}
            placeholder="database"
          />
        </label>
        <label>
          Identifier
          <input
            name="identifier"
            required
            value={identifier}
            onInput={(e) => setIdentifier(e.currentTarget.value)}
            placeholder="payments-prod-1"
          />
        </label>
        <button type="submit">Look up</button>
      </form>
      {chosen ? (
        <WhoCanAccess
          key={`${props.type}:${props.identifier}`}
          type={props.type}
          identifier={props.identifier}
        />
      ) : (
        <Registered />
      )}
    </Gate>
  );
}

import { useState } from 'preact/hooks';
import type { GrantingEvent } from '../types';
import { Link, whenExact } from './ui';

/**
 * The instant a `datetime-local` value names, read as UTC as the console shows every time; null
 * when it is empty or incomplete.
 */
export function instantOf(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return null;
  const at = new Date(`${value.length === 16 ? `${value}:00` : value}Z`);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

/** The `datetime-local` value of an instant, in UTC to the second. */
export const inputOf = (iso: string): string => iso.slice(0, 19);

/**
 * Picks the instant a panel shows access as of: a UTC date and time, or none for access now.
 * `value` is the instant shown; the field is applied by Show (or Enter) and emptied by Clear.
 */
export function AsOfPicker(props: { value: string | null; onChange: (at: string | null) => void }) {
  const [draft, setDraft] = useState(props.value ? inputOf(props.value) : '');
  const chosen = instantOf(draft);
  return (
    <form
      class="as-of"
      aria-label="Show access as of a date"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange(chosen);
      }}
    >
      <label class="inline">
        As of (UTC)
        <input
          type="datetime-local"
          step={1}
          value={draft}
          title="A UTC date and time; empty shows access now"
          onInput={(e) => setDraft(e.currentTarget.value)}
        />
      </label>
      <button type="submit" class="secondary small" disabled={chosen === props.value}>
        Show
      </button>
      <button
        type="button"
        class="secondary small"
        disabled={props.value === null && draft === ''}
        onClick={() => {
          setDraft('');
          props.onChange(null);
        }}
      >
        Clear
      </button>
    </form>
  );
}

/** Says that a panel shows access as of an instant rather than now. */
export function AsOfNote(props: { at: string }) {
  return (
    <p class="notice as-of-note" role="status">
      Showing access as of <time dateTime={props.at}>{whenExact(props.at)}</time>, not as it is now. Clear the
      date to see live access.
    </p>
  );
}

/** Who made a change: a client, a connector or the system, by id; a principal links to its page. */
export function Actor(props: { actor: GrantingEvent['actor'] }) {
  const { type, id } = props.actor;
  return (
    <span class="actor">
      {type}{' '}
      {type === 'principal' ? (
        <Link to={`/principals/${id}`}>
          <code>{id}</code>
        </Link>
      ) : (
        <code>{id}</code>
      )}
    </span>
  );
}

/** The audit event behind a change: its type, and its id. */
export function Cause(props: { cause: GrantingEvent }) {
  return (
    <span class="cause">
      <code class="event-type">{props.cause.event_type}</code>{' '}
      <span class="muted">
        event <code>{props.cause.event_id}</code>
      </span>
    </span>
  );
}

/**
 * The event that granted an entry held as of an instant, and who made it; null when the entry was
 * held before the history began.
 */
export function GrantedByEvent(props: { event: GrantingEvent | null }) {
  if (!props.event) return <div class="muted granted-by-event">held since before the history began</div>;
  return (
    <div class="granted-by-event">
      <Cause cause={props.event} />{' '}
      <span class="by">
        by <Actor actor={props.event.actor} />
      </span>
    </div>
  );
}

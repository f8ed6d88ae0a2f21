// Effective access of one principal, the graph walked as the service was designed: principal →
// groups (nested, at any depth) → policies → resources. A principal that is not active has
// none. Policies selecting it by `match` come in as $matched (the decision index evaluates those
// queries); every other link is an edge: APPLIES_TO from a policy to the principal or to a group
// it is in, MEMBER_OF up the nesting, ALLOWS or DENIES to each resource a policy names exactly.
// A glob reaches the registered resources that may match it: those of its type that start with
// its first literal run, end with its last and contain each run between. Those are plain text
// searches, bounded by the lengths of identifier and pattern whatever their content, where a
// regular expression made from the glob backtracks without end on `*a*a*a*a*a*a*a*a*a*a*b` and
// a long identifier of `a`s. The order of the runs is checked by src/decisions/repository.ts,
// which keeps only the candidates the glob matches.
// One row per policy: its grant (src/decisions/access.ts makes the entries) and `since`, when it
// took effect for the principal: the latest of the policy's activation, the moment it named the
// subject (APPLIES_TO `since`) and the principal's membership along the way (each path counts
// from its latest MEMBER_OF; the best path counts). A `match` subject counts from the
// principal's creation. Each row also says how the policy selects the principal (`via`: by
// id, through a group, or by `match`, in the decision engine's order of preference) and names
// the policy, so that an explained answer holds even where the decision index has yet to learn
// of a change. A time-bound policy counts only inside its window at $now, as in a decision; its
// grant dates from the window's opening when that came later, and says when the window closes.
MATCH (p:Principal {id: $id})
OPTIONAL CALL (p) {
  WITH p
  WHERE p:Active
  CALL (p) {
    MATCH (pol:Policy)-[e:APPLIES_TO]->(p)
    RETURN pol, CASE WHEN e.since > p.created_at THEN e.since ELSE p.created_at END AS since, 'principal' AS via
    UNION ALL
    MATCH path = (p)-[:MEMBER_OF*1..16]->(g:Group)
    WITH p, g, min(reduce(t = p.created_at, m IN relationships(path) |
      CASE WHEN m.added_at > t THEN m.added_at ELSE t END)) AS member
    MATCH (pol:Policy)-[e:APPLIES_TO]->(g)
    RETURN pol, CASE WHEN e.since > member THEN e.since ELSE member END AS since, 'group' AS via
    UNION ALL
    MATCH (pol:Policy)
    WHERE pol.id IN $matched
    RETURN pol, p.created_at AS since, 'match' AS via
  }
  WITH pol, min(since) AS since, collect(DISTINCT via) AS vias
  WHERE pol.status = 'active'
    AND (pol.valid_from IS NULL OR pol.valid_from <= datetime($now))
    AND (pol.valid_until IS NULL OR datetime($now) < pol.valid_until)
  CALL (pol) {
    MATCH (pol)-[:ALLOWS|DENIES]->(r:Resource)
    RETURN collect([r.type, r.identifier]) AS exact
  }
  CALL (pol) {
    UNWIND range(0, size(coalesce(pol.glob_types, [])) - 1) AS i
    WITH pol, i, split(pol.glob_patterns[i], '*') AS runs
    WHERE pol.effect = 'allow'
    MATCH (r:Resource)
    WHERE r.type = pol.glob_types[i] AND r.identifier STARTS WITH pol.glob_prefixes[i]
      AND r.registered AND r.identifier ENDS WITH last(runs)
      AND size(r.identifier) >= size(head(runs)) + size(last(runs))
      AND all(run IN runs[1..-1] WHERE r.identifier CONTAINS run)
    RETURN collect(DISTINCT [pol.glob_types[i], pol.glob_patterns[i], r.identifier]) AS candidates
  }
  RETURN collect({
    id: pol.id,
    name: pol.name,
    via: CASE WHEN 'principal' IN vias THEN 'principal' WHEN 'group' IN vias THEN 'group' ELSE 'match' END,
    effect: pol.effect,
    actions: pol.actions,
    conditional: pol.conditions IS NOT NULL,
    exact: exact,
    glob_types: coalesce(pol.glob_types, []),
    glob_patterns: coalesce(pol.glob_patterns, []),
    candidates: candidates,
    granted_at: reduce(t = since, at IN [pol.activated_at, pol.valid_from] |
      CASE WHEN at > t THEN at ELSE t END),
    valid_until: pol.valid_until
  }) AS grants
}
RETURN p.status AS status, p.type AS type, p.`attr.allowed_tools` AS allowed_tools, grants
